// What deploy/Dockerfile takes from the checkout and sets: read from the file itself, so that the
// tests check the file as written (test/deploy.test.ts, test/cli/package.test.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DOCKERFILE = path.join(root, 'deploy/Dockerfile');

/** The instructions of the Dockerfile, continuation lines joined, comments left out. */
function instructions(): Array<{ stage: number; keyword: string; args: string }> {
  const joined = readFileSync(DOCKERFILE, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  let stage = -1;
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      if (keyword.toUpperCase() === 'FROM') stage++;
      return { stage, keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

/** Paths in the build context that COPY instructions take (not those copied from another stage). */
export function dockerCopySources(): string[] {
  return instructions()
    .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from='))
    .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
}

/** The ENV variables the image that runs sets (its last stage). */
export function dockerRunEnv(): Record<string, string> {
  const all = instructions();
  const last = Math.max(...all.map((i) => i.stage));
  const env: Record<string, string> = {};
  for (const i of all.filter((x) => x.stage === last && x.keyword === 'ENV')) {
    for (const [, key, value] of i.args.matchAll(/(\w+)=(\S+)/g)) env[key!] = value!;
  }
  return env;
}
