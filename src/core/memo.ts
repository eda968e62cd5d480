// The one cache of a pure function's answers, for hot paths that compute the same small thing
// over and over (a microversion literal parsed, a claim statement per shape, a name quoted as
// JSON). It holds no state anyone could observe — the answer is the same with or without it — and
// it is bounded: past `max` keys it starts afresh.

export function memo<K, V>(fn: (key: K) => V, max: number): (key: K) => V {
  return memoBy((key: K) => key, fn, max);
}

/** `memo` for an argument that is not its own key: the answer depends on `keyOf(arg)` alone. */
export function memoBy<A, K, V>(keyOf: (arg: A) => K, fn: (arg: A) => V, max: number): (arg: A) => V {
  const known = new Map<K, V>();
  return (arg) => {
    const key = keyOf(arg);
    let value = known.get(key);
    if (value === undefined) {
      if (known.size >= max) known.clear();
      known.set(key, (value = fn(arg)));
    }
    return value;
  };
}
