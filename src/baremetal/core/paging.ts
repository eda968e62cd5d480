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
