/** Types of bundle.mjs (plain JS so the postinstall runs it under any Node). */
export declare const bundleDir: string;
export declare const bundleEntry: string;
export declare const daemonNodeFlags: readonly string[];
export declare function bundleIsFresh(): boolean;
export declare function bundleDaemon(): Promise<string>;
export declare function ensureBundle(): Promise<string>;
