export interface BundleBrowserOptions {
  /** ES module source to bundle (default: `export * from '@mq/client';`). */
  contents?: string;
  /** Where its imports resolve from (default: packages/client/scripts). */
  resolveDir?: string;
  /** Default true. */
  minify?: boolean;
}
/** Bundles `contents` for browsers with esbuild (platform browser, ESM); returns the code. */
export function bundleBrowser(options?: BundleBrowserOptions): Promise<string>;
