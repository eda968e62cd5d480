// JSON Merge Patch (RFC 7396): what `application/merge-patch+json` means on a PATCH. An object
// patch changes the members it names, recursively; null removes a member; anything else
// (arrays included) replaces the target whole.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function mergePatch(target: unknown, patch: unknown): Json {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch as Json;
  const result: { [key: string]: Json } =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as { [key: string]: Json }) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
