/** The first ```ts block of a README, or undefined. */
export function readmeExample(markdown: string): string | undefined;
/** Package name → the problems of its manifest and LICENSE (empty when none). */
export function allManifestProblems(): Promise<Record<string, string[]>>;
