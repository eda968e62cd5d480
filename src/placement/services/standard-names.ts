// At start-up: every Placement client expects the standard resource classes (os-resource-classes)
// and traits (os-traits) to exist. Safe when several processes start together.
import type { Database } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';

import { STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS, insertStandardNames } from '../store/names.js';

export async function syncStandardNames(database: Database): Promise<void> {
  await transaction(database, (tx) => insertStandardNames(tx, 'resource_classes', STANDARD_RESOURCE_CLASSES));
  await transaction(database, (tx) => insertStandardNames(tx, 'traits', STANDARD_TRAITS));
}
