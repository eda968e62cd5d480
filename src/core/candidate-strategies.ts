// The orders allocation candidates can be generated in: the values of `--candidate-strategy` and
// of Placement's `allot_strategy` query parameter, implemented by placement/candidates/search.ts.
// Here, in core/, because both the option table (config.ts) and Placement read the list, and the
// option table must not read a domain.

export const CANDIDATE_STRATEGIES = ['stable', 'pack', 'spread', 'random'] as const;

export type CandidateStrategy = (typeof CANDIDATE_STRATEGIES)[number];
