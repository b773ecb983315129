/** A request for one of the public read routes the router passes on (`/ledger/…` to settlement, `/market/…` to the marketplace). */
export interface PublicRead {
  service: 'ledger' | 'market';
  /** The path below the prefix, with its query. */
  path: string;
}

const segment = '[A-Za-z0-9._:%-]{1,200}';
const end = '(?:\\?[^#]*)?$';

/** Settlement's explorer reads (its spec's public group, the checkpoint and the consistency proof), never a write. */
const ledgerReads = [
  new RegExp(`^/v1/(?:info|supply|checkpoint|stream|batches|transfers|log/consistency)${end}`),
  new RegExp(`^/v1/(?:batch|receipt|anchor|account|hold|withdrawal)/${segment}${end}`),
  new RegExp(`^/v1/batch/${segment}/balance/${segment}${end}`),
];

/** The marketplace's public discovery. */
const marketReads = [new RegExp(`^/v1/(?:catalog|discover|registry)${end}`), new RegExp(`^/v1/services/${segment}${end}`)];

/** Whether the path is one of the allowed reads (`..` and encoded slashes cannot name another route: segments exclude `/`). */
export function isPublicRead(read: PublicRead): boolean {
  if (read.path.includes('..')) return false;
  return (read.service === 'ledger' ? ledgerReads : marketReads).some((pattern) => pattern.test(read.path));
}
