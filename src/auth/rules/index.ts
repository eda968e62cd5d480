// The default rules of each API, by API name (as the pipeline names them).
import type { RuleDefault } from '../policy.js';
import { BAREMETAL_RULES } from './baremetal.js';
import { IDS_RULES } from './ids.js';
import { PLACEMENT_RULES } from './placement.js';

export const DEFAULT_RULES: Readonly<Record<string, readonly RuleDefault[]>> = {
  placement: PLACEMENT_RULES,
  baremetal: BAREMETAL_RULES,
  ids: IDS_RULES,
};
