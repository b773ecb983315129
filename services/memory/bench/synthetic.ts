import { seededRandom as random } from '@platform/testkit/seeded-random';

/**
 * A deterministic corpus of agent-style memories for the scale benchmark: sentences built from templates and
 * vocabularies large enough that words have a realistic spread of frequencies (a few very common, most rare).
 */

const names = [
  'Maria',
  'Jordan',
  'Priya',
  'Owen',
  'Daniel',
  'Elena',
  'Richard',
  'Sofia',
  'Tom',
  'Leo',
  'Ana',
  'Mei',
  'David',
  'Kenji',
  'Fatima',
  'Lucas',
  'Amara',
  'Noah',
  'Ines',
  'Yusuf',
  'Chloe',
  'Mateo',
  'Hana',
  'Oliver',
  'Zara',
  'Ethan',
  'Lena',
  'Arjun',
  'Nadia',
  'Felix',
];
const relations = [
  'sister',
  'brother',
  'partner',
  'manager',
  'colleague',
  'neighbor',
  'friend',
  'cousin',
  'mother',
  'father',
  'landlord',
  'dentist',
  'accountant',
  'mentor',
  'nephew',
  'niece',
];
const places = [
  'Lisbon',
  'Denver',
  'Chicago',
  'Tokyo',
  'Kyoto',
  'Berlin',
  'Austin',
  'Seattle',
  'Tucson',
  'Osaka',
  'Porto',
  'Madrid',
  'Boston',
  'Oslo',
  'Vienna',
  'Prague',
  'Dublin',
  'Toronto',
  'Lima',
  'Nairobi',
  'Seoul',
  'Hanoi',
  'Athens',
  'Zurich',
];
const foods = [
  'sushi',
  'ramen',
  'tacos',
  'pizza',
  'curry',
  'pho',
  'falafel',
  'paella',
  'dumplings',
  'risotto',
  'bibimbap',
  'croissants',
  'oatmeal',
  'espresso',
  'matcha',
  'kombucha',
  'tiramisu',
  'gnocchi',
  'hummus',
  'ceviche',
];
const topics = [
  'budget',
  'roadmap',
  'migration',
  'dashboard',
  'invoice',
  'contract',
  'release',
  'incident',
  'offsite',
  'hiring',
  'pricing',
  'security review',
  'data pipeline',
  'onboarding',
  'quarterly report',
  'design review',
  'load test',
  'customer call',
];
const objects = [
  'bike',
  'laptop',
  'passport',
  'guitar',
  'camera',
  'car',
  'headphones',
  'kindle',
  'watch',
  'backpack',
  'umbrella',
  'keys',
  'tent',
  'drone',
  'monitor',
  'printer',
];
const days = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const hobbies = ['bouldering', 'running', 'chess', 'pottery', 'sailing', 'birdwatching', 'yoga', 'photography', 'baking', 'cycling', 'gardening', 'painting'];

const templates: ((pick: <T>(list: readonly T[]) => T, n: () => number) => { content: string; kind: string; tags: string[] })[] = [
  (pick) => ({
    content: `${pick(names)} (the user's ${pick(relations)}) lives in ${pick(places)} and loves ${pick(foods)}.`,
    kind: 'fact',
    tags: ['people'],
  }),
  (pick, n) => ({ content: `The ${pick(topics)} meeting with ${pick(names)} moved to ${pick(days)} at ${1 + (n() % 12)}pm.`, kind: 'event', tags: ['work'] }),
  (pick) => ({ content: `The user prefers ${pick(foods)} over ${pick(foods)} when eating out in ${pick(places)}.`, kind: 'preference', tags: ['food'] }),
  (pick, n) => ({ content: `${pick(names)}'s birthday is ${pick(months)} ${1 + (n() % 28)}; they like ${pick(hobbies)}.`, kind: 'fact', tags: ['birthday'] }),
  (pick) => ({ content: `The user left the ${pick(objects)} at ${pick(names)}'s place in ${pick(places)} on ${pick(days)}.`, kind: 'event', tags: [] }),
  (pick) => ({
    content: `For the ${pick(topics)}, send ${pick(names)} a summary every ${pick(days)} and copy the ${pick(relations)}.`,
    kind: 'procedure',
    tags: ['work'],
  }),
  (pick, n) => ({
    content: `Trip to ${pick(places)} in ${pick(months)}: book near the station, budget $${100 + (n() % 900)} a night.`,
    kind: 'note',
    tags: ['travel'],
  }),
  (pick, n) => ({
    content: `The user took up ${pick(hobbies)} with ${pick(names)} and goes every ${pick(days)} morning; reference ${n().toString(36)}.`,
    kind: 'fact',
    tags: ['hobby'],
  }),
];

export interface SyntheticMemory {
  content: string;
  kind: string;
  tags: string[];
  importance: number;
}

/** `count` memories from the seed; the same seed gives the same corpus. */
export function syntheticMemories(count: number, seed = 42): SyntheticMemory[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const integer = () => Math.floor(next() * 1_000_000);
  const memories: SyntheticMemory[] = [];
  for (let index = 0; index < count; index++) {
    const template = pick(templates);
    memories.push({ ...template(pick, integer), importance: Math.round(next() * 100) / 100 });
  }
  return memories;
}

/** Queries of the shape agents send: a few content words, sometimes a question. */
export function syntheticQueries(count: number, seed = 7): string[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const shapes = [
    () => `where does ${pick(names)} live?`,
    () => `${pick(topics)} meeting ${pick(days)}`,
    () => `what food does the user like in ${pick(places)}?`,
    () => `when is ${pick(names)}'s birthday`,
    () => `where did I leave my ${pick(objects)}`,
    () => `${pick(hobbies)} with ${pick(names)}`,
    () => `trip to ${pick(places)} in ${pick(months)}`,
  ];
  return Array.from({ length: count }, () => pick(shapes)());
}
