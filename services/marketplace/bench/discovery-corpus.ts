import { seededRandom } from '@platform/testkit/seeded-random';
import type { ListingStatus } from '../src/db/schema.ts';
import { type ManifestKind, manifestKinds } from '../src/listings/manifest-types.ts';
import type { ListingSeed } from '../test/discovery-fixtures.ts';

/*
 * A deterministic catalogue for the discovery bench: listings built from capability templates, qualifiers and
 * vocabularies wide enough that words spread the way a real catalogue's do (a few everywhere, most rare), prices
 * spread over six orders of magnitude, and measured stats from none to a hundred thousand calls.
 */

interface Capability {
  noun: string;
  verb: string;
  objects: string[];
  operations: Array<[name: string, description: string, unit: string]>;
}

const capabilities: Capability[] = [
  {
    noun: 'Translate',
    verb: 'Translates',
    objects: ['documents', 'web pages', 'chat messages', 'subtitles', 'legal contracts'],
    operations: [
      ['translate', 'Translate text between languages, keeping formatting', 'token'],
      ['detect-language', 'Detect the language of a text', 'call'],
    ],
  },
  {
    noun: 'Weather',
    verb: 'Forecasts',
    objects: ['hourly weather', 'precipitation', 'wind and storms', 'air quality', 'UV index'],
    operations: [
      ['forecast', 'Hourly and daily weather forecast for a location', 'call'],
      ['history', 'Historical weather observations', 'item'],
    ],
  },
  {
    noun: 'OCR',
    verb: 'Extracts text from',
    objects: ['scanned invoices', 'receipts', 'handwritten notes', 'passports', 'PDF files'],
    operations: [
      ['extract-text', 'Optical character recognition of an image or PDF page', 'item'],
      ['extract-tables', 'Table structure recognition', 'item'],
    ],
  },
  {
    noun: 'Summarize',
    verb: 'Summarizes',
    objects: ['research papers', 'meeting transcripts', 'news articles', 'email threads', 'books'],
    operations: [
      ['summarize', 'Abstractive summary with key points', 'token'],
      ['bullet-points', 'Extract the main points as a list', 'token'],
    ],
  },
  {
    noun: 'Code Review',
    verb: 'Reviews',
    objects: ['pull requests', 'TypeScript code', 'Python scripts', 'SQL queries', 'smart contracts'],
    operations: [
      ['review', 'Find bugs, security issues and style problems in a diff', 'token'],
      ['explain', 'Explain what a piece of code does', 'token'],
    ],
  },
  {
    noun: 'Image Generation',
    verb: 'Generates',
    objects: ['product photos', 'illustrations', 'logos', 'icons', 'marketing banners'],
    operations: [
      ['generate-image', 'Text-to-image generation at up to 2048 pixels', 'item'],
      ['upscale', 'Upscale an image four times', 'item'],
    ],
  },
  {
    noun: 'Geocoding',
    verb: 'Geocodes',
    objects: ['street addresses', 'postal codes', 'points of interest', 'coordinates', 'city names'],
    operations: [
      ['geocode', 'Address to latitude and longitude', 'call'],
      ['reverse-geocode', 'Coordinates to the nearest address', 'call'],
    ],
  },
  {
    noun: 'Market Data',
    verb: 'Streams',
    objects: ['stock quotes', 'crypto prices', 'foreign exchange rates', 'commodity futures', 'bond yields'],
    operations: [
      ['quote', 'Latest price and volume of a symbol', 'call'],
      ['candles', 'Historical OHLC candles', 'item'],
    ],
  },
  {
    noun: 'Sentiment',
    verb: 'Scores sentiment of',
    objects: ['product reviews', 'tweets', 'support tickets', 'survey answers', 'news headlines'],
    operations: [
      ['classify', 'Positive, negative or neutral with a confidence', 'call'],
      ['aspects', 'Aspect-based sentiment', 'token'],
    ],
  },
  {
    noun: 'Transcribe',
    verb: 'Transcribes',
    objects: ['podcasts', 'phone calls', 'voice notes', 'video lectures', 'interviews'],
    operations: [
      ['transcribe', 'Speech to text with timestamps and speaker labels', 'second'],
      ['diarize', 'Who spoke when', 'second'],
    ],
  },
  {
    noun: 'Search',
    verb: 'Searches',
    objects: ['the web', 'academic papers', 'patents', 'job postings', 'real estate listings'],
    operations: [
      ['search', 'Ranked results with snippets', 'call'],
      ['fetch-page', 'Fetch and clean a result page', 'byte'],
    ],
  },
  {
    noun: 'Email',
    verb: 'Sends and validates',
    objects: ['transactional email', 'newsletters', 'email addresses', 'bounce reports', 'inbox rules'],
    operations: [
      ['send', 'Send an email with tracking', 'call'],
      ['validate-address', 'Check that an address can receive mail', 'call'],
    ],
  },
  {
    noun: 'Calendar',
    verb: 'Schedules',
    objects: ['meetings', 'appointments', 'shifts', 'reminders', 'room bookings'],
    operations: [
      ['find-slot', 'Find a free slot for every attendee', 'call'],
      ['book', 'Book an event and send invitations', 'call'],
    ],
  },
  {
    noun: 'Embeddings',
    verb: 'Embeds',
    objects: ['sentences', 'documents', 'images', 'code snippets', 'product catalogues'],
    operations: [
      ['embed', 'Dense vector embedding for semantic search', 'token'],
      ['rerank', 'Rerank candidates against a query', 'item'],
    ],
  },
  {
    noun: 'Fraud Check',
    verb: 'Screens',
    objects: ['card payments', 'sign-ups', 'wallet addresses', 'refund requests', 'login attempts'],
    operations: [
      ['score', 'Risk score with the signals behind it', 'call'],
      ['sanctions', 'Sanctions and watch-list screening', 'call'],
    ],
  },
  {
    noun: 'Shipping',
    verb: 'Tracks and rates',
    objects: ['parcels', 'freight', 'customs declarations', 'delivery routes', 'return labels'],
    operations: [
      ['track', 'Tracking events of a shipment', 'call'],
      ['rates', 'Compare carrier rates', 'call'],
    ],
  },
  {
    noun: 'Legal',
    verb: 'Analyzes',
    objects: ['contracts', 'privacy policies', 'court rulings', 'terms of service', 'NDAs'],
    operations: [
      ['clauses', 'Extract and classify clauses', 'token'],
      ['risk', 'Flag risky terms', 'token'],
    ],
  },
  {
    noun: 'Medical Coding',
    verb: 'Codes',
    objects: ['clinical notes', 'discharge summaries', 'lab reports', 'prescriptions', 'insurance claims'],
    operations: [
      ['icd10', 'Suggest ICD-10 codes', 'token'],
      ['normalize-drug', 'Map drug names to RxNorm', 'call'],
    ],
  },
  {
    noun: 'Web Scraper',
    verb: 'Scrapes',
    objects: ['product pages', 'price lists', 'social profiles', 'reviews', 'company websites'],
    operations: [
      ['scrape', 'Render and extract structured data from a page', 'call'],
      ['crawl', 'Crawl a site to a depth', 'item'],
    ],
  },
  {
    noun: 'Chess',
    verb: 'Analyzes',
    objects: ['chess games', 'openings', 'endgames', 'puzzles', 'tournament results'],
    operations: [
      ['best-move', 'Engine evaluation and best move', 'call'],
      ['annotate', 'Annotate a game with comments', 'call'],
    ],
  },
  {
    noun: 'Text to Speech',
    verb: 'Speaks',
    objects: ['articles', 'audiobooks', 'notifications', 'dialogue', 'announcements'],
    operations: [
      ['speak', 'Natural voice synthesis in many voices', 'token'],
      ['clone-voice', 'Create a custom voice from samples', 'call'],
    ],
  },
  {
    noun: 'Compliance',
    verb: 'Audits',
    objects: ['GDPR requests', 'SOC 2 evidence', 'access logs', 'vendor questionnaires', 'retention policies'],
    operations: [
      ['audit', 'Check evidence against a control set', 'item'],
      ['redact', 'Redact personal data', 'token'],
    ],
  },
  {
    noun: 'Recipe',
    verb: 'Plans',
    objects: ['weekly meals', 'grocery lists', 'diet plans', 'recipes', 'nutrition facts'],
    operations: [
      ['plan-meals', 'Meal plan for dietary constraints', 'call'],
      ['nutrition', 'Nutrition facts of a recipe', 'call'],
    ],
  },
  {
    noun: 'Travel',
    verb: 'Finds',
    objects: ['flights', 'hotels', 'train tickets', 'rental cars', 'visa requirements'],
    operations: [
      ['search-flights', 'Flight offers with fares and layovers', 'call'],
      ['visa', 'Visa rules between two countries', 'call'],
    ],
  },
];

const brands = [
  'Atlas',
  'Nimbus',
  'Quill',
  'Vector',
  'Beacon',
  'Polaris',
  'Swift',
  'Cobalt',
  'Harbor',
  'Lumen',
  'Orbit',
  'Prism',
  'Sierra',
  'Tundra',
  'Zenith',
  'Aurora',
  'Falcon',
  'Juniper',
  'Krypton',
  'Meridian',
  'Nova',
  'Onyx',
  'Pioneer',
  'Quasar',
  'Redwood',
  'Sable',
  'Talon',
  'Umbra',
  'Vertex',
  'Willow',
];
const suffixes = ['API', 'Pro', 'Cloud', 'Engine', 'Agent', 'Hub', 'Kit', 'Labs', 'Studio', 'Direct'];
const qualifiers = [
  'fast',
  'accurate',
  'cheap',
  'enterprise-grade',
  'privacy-first',
  'open-source',
  'multilingual',
  'real-time',
  'batch',
  'low-latency',
  'GPU-accelerated',
  'self-hosted',
  'on-device',
  'audited',
  'HIPAA-compliant',
];
const audiences = [
  'startups',
  'hospitals',
  'law firms',
  'banks',
  'retailers',
  'developers',
  'researchers',
  'newsrooms',
  'logistics teams',
  'schools',
  'game studios',
  'insurers',
  'agencies',
  'municipalities',
  'farmers',
];
const languages = ['English', 'French', 'German', 'Spanish', 'Japanese', 'Portuguese', 'Arabic', 'Hindi', 'Korean', 'Italian', 'Dutch', 'Polish'];
const regions = ['Europe', 'North America', 'Asia', 'Latin America', 'Africa', 'Oceania', 'the Nordics', 'the Middle East'];

export interface CorpusOptions {
  active: number;
  /** Listings in draft, paused or delisted (a discovery query must step over them). */
  inactive: number;
  seed: number;
}

/** The catalogue: `active` listings that discovery shows and `inactive` ones it must not. */
export function discoveryCorpus(options: CorpusOptions): ListingSeed[] {
  const next = seededRandom(options.seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const listings: ListingSeed[] = [];
  const others: ListingStatus[] = ['draft', 'paused', 'delisted'];
  for (let index = 0; index < options.active + options.inactive; index++) {
    const capability = pick(capabilities);
    const brand = `${pick(brands)} ${capability.noun} ${pick(suffixes)}`;
    const object = pick(capability.objects);
    const audience = pick(audiences);
    const summary = `${capability.verb} ${object} for ${audience}: ${pick(qualifiers)}, ${pick(qualifiers)} and available in ${pick(regions)}. Supports ${pick(languages)} and ${pick(languages)}.`;
    const operations = capability.operations.slice(0, 1 + Math.floor(next() * capability.operations.length)).map(([name, description, unit]) => ({
      name,
      description: `${description} (${pick(qualifiers)})`,
      unit,
      // Log-uniform from one micro to one unit: the cheapest listing and the dearest are a million times apart.
      priceMicros: BigInt(Math.max(1, Math.round(10 ** (next() * 6)))),
      maxUnits: 1 + Math.floor(next() * 1000),
    }));
    const calls = next() < 0.15 ? 0 : Math.floor(10 ** (next() * 5));
    const failureRate = next() < 0.8 ? next() * 0.05 : next() * 0.5;
    const failures = Math.round(calls * failureRate);
    listings.push({
      slug: `${brand.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${index}`,
      displayName: brand,
      summary,
      kind: pick(manifestKinds) as ManifestKind,
      status: index < options.active ? 'active' : pick(others),
      confidential: next() < 0.3,
      tags: [capability.noun.toLowerCase(), pick(qualifiers), pick(languages).toLowerCase(), pick(audiences)],
      operations,
      stats: calls === 0 ? undefined : { calls, successes: calls - failures, failures, latencyMs: Math.round(20 + next() ** 3 * 5_000) },
    });
  }
  return listings;
}

/** One discovery request of the bench's mix: a query, filters, or both. */
export interface DiscoveryProbe {
  q?: string;
  kind?: string;
  max_price_wei?: string;
  min_quality?: string;
  min_uptime_bps?: number;
  confidential?: boolean;
}

/** A seeded mix of searches: single words, phrases from the catalogue, natural questions, with and without filters. */
export function discoveryProbes(count: number, seed: number): DiscoveryProbe[] {
  const next = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const probes: DiscoveryProbe[] = [];
  for (let index = 0; index < count; index++) {
    const capability = pick(capabilities);
    const shape = index % 6;
    const probe: DiscoveryProbe = {};
    if (shape === 0) probe.q = capability.noun.toLowerCase();
    else if (shape === 1) probe.q = `${pick(capability.objects)} for ${pick(audiences)}`;
    else if (shape === 2) probe.q = `${pick(qualifiers)} ${capability.noun.toLowerCase()} in ${pick(languages)}`;
    else if (shape === 3) probe.q = `I need to ${capability.operations[0]?.[1].toLowerCase()}`;
    // Shapes 4 and 5: filters only (browse), or a word with every filter.
    else if (shape === 5) probe.q = pick(capability.objects);
    if (shape >= 3 && next() < 0.7) probe.kind = pick(manifestKinds);
    if (shape >= 4) {
      probe.max_price_wei = String(Math.round(10 ** (2 + next() * 4)));
      probe.min_quality = (0.5 + next() * 0.45).toFixed(2);
      if (next() < 0.5) probe.min_uptime_bps = Math.round(9000 + next() * 900);
      if (next() < 0.5) probe.confidential = next() < 0.5;
    }
    probes.push(probe);
  }
  return probes;
}
