// The definition of a space as the hub keeps it (API.md 3.1): the members the hub reads are typed, the rest kept as given.

export interface SpaceDefinition {
  title: string;
  description?: string;
  owner?: string;
  cid?: string;
  shared?: boolean;
  readOnly?: boolean;
  enableUUID?: boolean;
  enableHistory?: boolean;
  packages?: string[];
  searchableProperties?: Record<string, boolean>;
  /** Seconds a client may cache feature reads (API.md 1.9). */
  cacheTTL?: number;
  /** How many versions reads can reach back (ADR 002); above 1 the space keeps history. */
  versionsToKeep?: number;
  createdAt: number;
  updatedAt: number;
  [member: string]: unknown;
}
