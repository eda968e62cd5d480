// Capacity arithmetic, shared by every place that admits or checks an allocation.

export const MAX_INT = 2147483647;
/** largest value of a 4-byte float; Placement's upper bound for allocation_ratio */
export const MAX_FLOAT = 3.40282e38;

export interface InventoryLimits {
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
}

export const INVENTORY_DEFAULTS = { reserved: 0, min_unit: 1, max_unit: MAX_INT, step_size: 1, allocation_ratio: 1.0 } as const;

/** How much can be allocated in all: (total - reserved) × allocation_ratio, rounded down. */
export function capacity(inv: InventoryLimits): number {
  return capacityOf(inv.total, inv.reserved, inv.allocation_ratio);
}

/** capacity() of the numbers themselves (the candidates index keeps no objects). */
export function capacityOf(total: number, reserved: number, allocationRatio: number): number {
  return Math.floor((total - reserved) * allocationRatio);
}

/** Why one allocation of `amount` does not fit the inventory's unit rules, or null when it does. */
export function unitViolation(inv: InventoryLimits, amount: number): 'min_unit' | 'max_unit' | 'step_size' | null {
  return unitViolationOf(inv.min_unit, inv.max_unit, inv.step_size, amount);
}

/** unitViolation() of the numbers themselves. */
export function unitViolationOf(minUnit: number, maxUnit: number, stepSize: number, amount: number): 'min_unit' | 'max_unit' | 'step_size' | null {
  if (amount < minUnit) return 'min_unit';
  if (amount > maxUnit) return 'max_unit';
  if (amount % stepSize !== 0) return 'step_size';
  return null;
}
