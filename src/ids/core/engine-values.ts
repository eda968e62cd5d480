// The values of the attributes a service instance holds in the other two engines (pure): a
// bare-metal node (`from: node`) and Placement capacity (`from: capacity`), and the spec's terms
// for them, read as Placement's query parameters read them. The values' shapes are the API's
// (schemas.ts NodeValue, CapacityValue).
import type { CapacityValue, NodeValue } from '../../client/ids-wire.js';

export type { CapacityValue, NodeValue };

/** provider uuid → resource class → amount */
export type Amounts = Map<string, Map<string, number>>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const isNodeValue = (v: unknown): v is NodeValue => isObject(v) && typeof v.node === 'string' && typeof v.allocation === 'string';
export const isCapacityValue = (v: unknown): v is CapacityValue => isObject(v) && typeof v.consumer === 'string' && isObject(v.allocations);

export function amountsOf(v: CapacityValue): Amounts {
  return new Map(Object.entries(v.allocations).map(([provider, { resources }]) => [provider, new Map(Object.entries(resources))]));
}

export function capacityValue(consumer: string, amounts: Amounts): CapacityValue {
  const allocations: CapacityValue['allocations'] = {};
  for (const [provider, resources] of amounts) if (resources.size) allocations[provider] = { resources: Object.fromEntries(resources) };
  return { consumer, allocations };
}

export function sumAmounts(parts: Iterable<Amounts>): Amounts {
  const out: Amounts = new Map();
  for (const part of parts) {
    for (const [provider, resources] of part) {
      const into = out.get(provider) ?? new Map<string, number>();
      for (const [rc, n] of resources) into.set(rc, (into.get(rc) ?? 0) + n);
      out.set(provider, into);
    }
  }
  return out;
}

/** The same amounts (zero and absent alike), whatever the order. */
export function sameAmounts(a: Amounts, b: Amounts): boolean {
  const flat = (m: Amounts) =>
    [...m]
      .flatMap(([p, r]) => [...r].filter(([, n]) => n !== 0).map(([rc, n]) => `${p}/${rc}=${n}`))
      .sort()
      .join(',');
  return flat(a) === flat(b);
}

/**
 * After a reshape moved a consumer's allocations: each part (an attribute's former amounts) gets
 * the same amounts of each class again, from the provider it had when that provider still has
 * them, else from the others in turn. A part whose amounts are no longer there in full is null
 * (the reshape took them away); what no part claims is left over.
 */
export function splitAmounts(total: Amounts, parts: readonly Amounts[]): Array<Amounts | null> {
  const left: Amounts = new Map([...total].map(([p, r]) => [p, new Map(r)]));
  const take = (provider: string, rc: string, wanted: number): number => {
    const have = left.get(provider)?.get(rc) ?? 0;
    const n = Math.min(have, wanted);
    if (n > 0) left.get(provider)!.set(rc, have - n);
    return n;
  };
  return parts.map((part) => {
    const out: Amounts = new Map();
    const add = (provider: string, rc: string, n: number) => {
      if (n > 0) out.set(provider, (out.get(provider) ?? new Map()).set(rc, (out.get(provider)?.get(rc) ?? 0) + n));
    };
    for (const [provider, resources] of part) {
      for (const [rc, amount] of resources) {
        let missing = amount - take(provider, rc, amount);
        add(provider, rc, amount - missing);
        for (const other of left.keys()) {
          if (missing === 0) break;
          const n = take(other, rc, missing);
          add(other, rc, n);
          missing -= n;
        }
        if (missing > 0) return null;
      }
    }
    return out;
  });
}

/**
 * A spec's `required` terms, as Placement's `required` parameter reads them: `TRAIT` (must have),
 * `!TRAIT` (must not have), `in:A,B` (at least one of).
 */
export function traitTerms(terms: readonly string[]): { required: string[][]; forbidden: string[] } {
  const required: string[][] = [];
  const forbidden: string[] = [];
  for (const t of terms) {
    if (t.startsWith('in:')) required.push(t.slice(3).split(','));
    else if (t.startsWith('!')) forbidden.push(t.slice(1));
    else required.push([t]);
  }
  return { required, forbidden };
}

/** A spec's `member_of` terms, as Placement's `member_of` reads them: `uuid`, `in:uuid,uuid`, `!uuid`. */
export function aggregateTerms(terms: readonly string[]): { memberOf: string[][]; forbidden: string[] } {
  const memberOf: string[][] = [];
  const forbidden: string[] = [];
  for (const t of terms) {
    if (t.startsWith('in:')) memberOf.push(t.slice(3).split(','));
    else if (t.startsWith('!')) forbidden.push(...t.slice(1).split(','));
    else memberOf.push([t]);
  }
  return { memberOf, forbidden };
}
