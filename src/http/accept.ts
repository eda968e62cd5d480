// Content negotiation: the one reading of an `Accept` header for every API.

/** Does an Accept header admit this media type (honouring wildcards and q=0)? */
export function accepts(accept: string, type: string): boolean {
  const [major] = type.split('/');
  return accept.split(',').some((part) => {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) return false;
    return range === type || range === '*/*' || range === `${major}/*`;
  });
}
