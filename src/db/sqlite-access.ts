// What SQLite needs of the file system before allot opens a database file, checked before anything
// is opened or created. In WAL mode SQLite reads and writes the database file, and creates (or
// reuses) `FILE-wal` and `FILE-shm` beside it; when it cannot, it fails later and vaguely ("attempt
// to write a readonly database", or an error naming `FILE-wal`), leaves the companion files it made,
// and a process that waits for its database to come back waits for ever: a permission does not
// heal by itself. So the start names the file, the permission and the fix, and creates nothing.
import { type Stats, accessSync, constants, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The file's status, or null when there is none (ENOTDIR: a file stands where a directory on its path should) */
function statOrNull(file: string): Stats | null {
  try {
    return statSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/** Why the directory `dir`, which does not exist, cannot simply be created with mkdir -p, or null */
function uncreatableDirectory(dir: string): string | null {
  for (let ancestor = path.dirname(dir); ancestor !== path.dirname(ancestor); ancestor = path.dirname(ancestor)) {
    const s = statOrNull(ancestor);
    if (s) return s.isDirectory() ? null : `the directory ${dir} cannot exist: ${ancestor} is a file, not a directory; name a file in another directory`;
  }
  return null;
}

/** Can this process do `mode` (fs.constants R_OK | W_OK …) on `file`? (root may, except on a read-only mount) */
function can(file: string, mode: number): boolean {
  try {
    accessSync(file, mode);
    return true;
  } catch {
    return false;
  }
}

/** "user allot (uid 998)": who needs the permission. */
function thisUser(): string {
  const uid = process.getuid?.();
  let name: string | null = null;
  try {
    name = os.userInfo().username;
  } catch {
    /* a uid without a passwd entry (a container) */
  }
  return `${name ? `user ${name}` : 'this user'}${uid === undefined ? '' : ` (uid ${uid})`}`;
}

/** "owned by uid 0 with mode 0444": what the file is now. */
const describe = (s: Stats) => `owned by uid ${s.uid} with mode ${(s.mode & 0o7777).toString(8).padStart(4, '0')}`;

/**
 * Why SQLite could not work on the database `file` (a path, not `:memory:`), or null when it can:
 * the directory is missing or not writable where a file must be created, the database or a
 * companion file left by someone else is not readable and writable by this process.
 */
export function sqliteAccessProblem(file: string): string | null {
  const dir = path.dirname(path.resolve(file));
  const who = thisUser();
  const dirStat = statOrNull(dir);
  if (!dirStat) return uncreatableDirectory(dir) ?? `the directory ${dir} does not exist: create it (mkdir -p ${dir}) or name a file in another directory`;
  if (!dirStat.isDirectory()) return `${dir} is not a directory`;
  if (!can(dir, constants.X_OK))
    return `the directory ${dir} cannot be entered by ${who}: it is ${describe(dirStat)}; give that user search (x) permission on it`;

  const fileStat = statOrNull(file);
  if (fileStat?.isDirectory()) return `${file} is a directory, not a database file`;
  if (fileStat && !can(file, constants.R_OK | constants.W_OK)) {
    return `${file} is not readable and writable by ${who}: it is ${describe(fileStat)}, and allot writes to its database; give that user read and write permission on the file (chmod u+rw / chown), or name another file`;
  }

  const created: string[] = fileStat ? [] : [file];
  for (const companion of [`${file}-wal`, `${file}-shm`]) {
    const s = statOrNull(companion);
    if (!s) created.push(companion);
    else if (!can(companion, constants.R_OK | constants.W_OK)) {
      return `${companion} is not readable and writable by ${who}: it is ${describe(s)}, left so by an earlier run or another user; give it the owner and mode of the database file (chown/chmod); SQLite needs it to read the database`;
    }
  }
  if (created.length > 0 && !can(dir, constants.W_OK | constants.X_OK)) {
    const names = created.map((f) => path.basename(f)).join(', ');
    return `the directory ${dir} is not writable by ${who}: it is ${describe(dirStat)}, and SQLite must create ${names} in it (WAL mode keeps -wal and -shm files beside the database); give that user write permission on the directory, or name a file in another one`;
  }
  return null;
}
