// Types of vendor-bundles.js (plain JS, so the `platform` command loads it before any TypeScript).
export interface VendorBundle {
  url: string;
  format: 'module' | 'commonjs';
  keepOwnCopy: string[];
}
export function vendorRedirects(root?: URL): Map<string, VendorBundle>;
export function vendorRedirect(table: Map<string, VendorBundle>, specifier: string, parentURL: string | undefined): VendorBundle | undefined;
