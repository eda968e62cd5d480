// JSON written as text, for the hot answers where building objects only to stringify them costs
// too much (Placement's allocation candidates: a sixth of a scheduler loop), typed all the same.
// `Json<T>` is the text of a value of type T; it is made only by the builders here, each typed by
// what it writes, so an answer assembled from pieces is checked by the compiler against its wire
// type: a member missing, misnamed, undocumented or of another type does not compile.
import { memo } from './memo.js';

declare const value: unique symbol;
/** The JSON text of a value of type T. */
export type Json<T> = string & { readonly [value]: T };

export const jsonNumber = (n: number): Json<number> => `${n}` as Json<number>;
export const JSON_NULL = 'null' as Json<null>;

/** A string's text. Names and uuids come back in every answer: each is quoted once and the text remembered. */
export const jsonString: (s: string) => Json<string> = memo((s: string) => JSON.stringify(s) as Json<string>, 200_000);

/** `[…]` of the items' texts. */
export const jsonArray = <T>(items: readonly Json<T>[]): Json<T[]> => `[${items.join(',')}]` as Json<T[]>;

/** The members of T it must have. */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The members' texts, in the order named: an optional member's may be undefined (left out). */
type ShapeArgs<T, K extends readonly (keyof T)[]> = {
  [I in keyof K]: undefined extends T[K[I]] ? Json<Exclude<T[K[I]], undefined>> | undefined : Json<T[K[I]]>;
};

/**
 * A writer of T's text whose members are named once, here: `jsonShape<T>()('a', 'b')` is
 * `(a, b) => Json<T>`, each argument typed by its member of T. A name T does not have, or a shape
 * that leaves out a member T requires, does not compile. For the hot pieces: no object is made per
 * call and the names' text is written once.
 */
export function jsonShape<T extends object>() {
  return <const K extends readonly (keyof T & string)[]>(
    ...names: K
  ): [Exclude<RequiredKeys<T>, K[number]>] extends [never] ? (...members: ShapeArgs<T, K>) => Json<T> : { missing: Exclude<RequiredKeys<T>, K[number]> } => {
    const heads = names.map((name) => `"${name}":`);
    const write = (...members: (string | undefined)[]) => {
      let out = '';
      for (let i = 0; i < heads.length; i++) {
        const text = members[i];
        if (text !== undefined) out += out ? `,${heads[i]}${text}` : `${heads[i]}${text}`;
      }
      return `{${out}}`;
    };
    return write as never;
  };
}

/** A record's text (`{"<key>": V, …}`), added to entry by entry. */
export class JsonRecord<V> {
  private text = '';

  add(key: string, member: Json<V>): this {
    this.text += `${this.text ? ',' : ''}${jsonString(key)}:${member}`;
    return this;
  }

  done(): Json<Record<string, V>> {
    return `{${this.text}}` as Json<Record<string, V>>;
  }
}
