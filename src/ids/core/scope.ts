// Whose pools a caller uses: every project's (policy `ids:all_projects`: by default admins, the
// system scope and services), or the shared pools (no project) and its own project's. A pool out
// of scope is answered as one that does not exist.
export type PoolScope = { all: true } | { all: false; project: string | null };

export const EVERY_POOL: PoolScope = { all: true };

export function inScope(scope: PoolScope, poolProject: string | null): boolean {
  return scope.all || poolProject === null || poolProject === scope.project;
}
