// One page of an Ironic list as routes/listing.ts reads it from the query and the stores cut it
// (store/paging.ts): the sort, its direction, the size, and where the previous page ended.

export type SortDir = 'asc' | 'desc';

export interface Page {
  sortKey: string;
  sortDir: SortDir;
  limit: number;
  /** the row the previous page ended with: its sort value and id */
  after?: { value: unknown; id: number };
}

/**
 * How a list filter's value meets its column — all the store needs to apply it, so a filter that
 * is a comparison with one column of the listed table is declared in one place (routes/query.ts
 * `column`) and the store applies every such filter the same way (store/paging.ts `applyColumns`):
 * `equals` the value; `lower` the value in lower case; `flag` a boolean kept as 1/0; `present`
 * true: the column is set, false: it is null; `contains` the column's text holds the value.
 */
export type Compare = 'equals' | 'lower' | 'flag' | 'present' | 'contains';

/** One declared column filter with the value the request gave it. */
export interface ColumnCondition {
  column: string;
  compare: Compare;
  value: string | boolean;
}
