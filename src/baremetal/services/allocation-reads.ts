// Reading allocations for the routes: one by uuid or name (or allocation_not_found), a page of a
// filtered list. What writes an allocation, and its rules, is in allocations.ts.
import type { BaremetalContext } from '../context.js';
import type { Page } from '../core/paging.js';
import { type AllocationFilters, type AllocationRecord, findAllocation, listAllocations, requireAllocation } from '../store/allocations.js';

export { ALLOCATION_STATES, type AllocationColumn, type AllocationFilters, type AllocationRecord, allocationNotFound } from '../store/allocations.js';

/** The allocation with this uuid or name, or allocation_not_found. */
export function getAllocation(ctx: BaremetalContext, ident: string): Promise<AllocationRecord> {
  return requireAllocation(ctx.database, ident);
}

/** The allocation with this uuid or name, if there is one. */
export function lookupAllocation(ctx: BaremetalContext, ident: string): Promise<AllocationRecord | undefined> {
  return findAllocation(ctx.database, ident);
}

export function listAllocationPage(ctx: BaremetalContext, filters: AllocationFilters, page: Page): Promise<AllocationRecord[]> {
  return listAllocations(ctx.database, filters, page);
}
