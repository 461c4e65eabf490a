// The typed space list query the hub hands to storage; each engine compiles it to its own SQL.

export type ComparisonOperator = '=' | '!=' | '>' | '>=' | '<' | '<=';

/** `contentUpdatedAt` compared with each value; the comparisons are OR-ed (API.md 3.6). */
export interface TimeCondition {
  op: ComparisonOperator;
  values: number[];
}

export interface SpaceListFilter {
  /** `is`: only the spaces of this owner; `isNot`: every other space, spaces without an owner included. */
  owner?: { is: string } | { isNot: string };
  contentUpdatedAt?: TimeCondition;
  /** The access rule where it fits a query: only shared spaces and the spaces of these owners. Absent: no such condition. */
  sharedOrOwnedBy?: string[];
}
