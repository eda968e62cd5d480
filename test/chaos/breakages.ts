// The deliberately broken builds of `npm run test:chaos:broken` (broken-builds.ts): each one
// guarantee taken out of the compiled JavaScript by text replacement. breakages.test.ts checks in
// every `npm test` that each replaced text is still in dist/, so a breakage cannot silently stop
// applying as the code moves on.

export interface Breakage {
  what: string;
  /** file under dist/ → [text, replacement] pairs */
  edits: Record<string, Array<[string, string]>>;
}

export const BREAKAGES: Record<string, Breakage> = {
  'no-consumer-generation-compare': {
    what: 'a Placement write does not compare the consumer generation the client sent (both the one-statement path and the general one)',
    edits: {
      'placement/store/one-statement-writes.js': [
        ['where c.uuid = v.uuid and c.generation = v.generation and c.held_by is null', 'where c.uuid = v.uuid and c.held_by is null'],
      ],
      'placement/store/allocations.js': [['existing?.generation !== w.generation', 'existing === undefined']],
    },
  },
  'no-capacity-check': {
    what: 'a Placement claim does not check the provider’s capacity (both paths)',
    edits: {
      'placement/store/one-statement-writes.js': [['floor((i.total - i.reserved) * i.allocation_ratio)', '1000000000']],
      'core/capacity.js': [['return capacityOf(inv.total, inv.reserved, inv.allocation_ratio);', 'return 1e9;']],
    },
  },
  'unfenced-conductor': {
    what: 'a conductor finishes an allocation without checking it still owns it (no `conductor_affinity = <me>` and no `state = allocating` in its final write), and its worker goes on with an allocation taken over from it',
    edits: {
      // (the placeholder kept: the statement is still sent the conductor's name)
      'baremetal/store/allocations.js': [["where id = ? and conductor_affinity = ? and state = 'allocating'", 'where id = ? and cast(? as text) is not null']],
      'baremetal/services/allocation-attempts.js': [
        ["if (allocation?.state !== 'allocating' || allocation.conductor_affinity !== ctx.conductorId)", 'if (!allocation)'],
      ],
    },
  },
  'unfenced-node-lock': {
    what: 'a conductor finishes a node’s transition without checking it still holds the node’s lock (a paused one whose lock was taken over finishes it when it resumes)',
    edits: {
      'baremetal/services/node-states.js': [['if (!node || node.reservation !== ctx.conductorId)', 'if (!node)']],
    },
  },
};
