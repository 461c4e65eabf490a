// The storage interface every engine implements: spaces, features and access records.
import type { BBox } from '../geo/bbox.js';
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage } from '../core/feature-query.js';
import type { SpaceListFilter } from '../core/space-query.js';

export interface StoredSpace {
  id: string;
  /** The space definition as the hub keeps it (title, owner, createdAt, updatedAt, …). */
  definition: Record<string, unknown>;
  /** Time of the last feature write or delete; the creation time until then. */
  contentUpdatedAt: number;
  /** Bumped by every feature write; identifies the state of the content (ETags). */
  revision: number;
  featureCount: number;
}

export interface SpaceStore {
  /** Throws `spaceExists` when the id is taken. */
  create(id: string, definition: Record<string, unknown>, createdAt: number): Promise<StoredSpace>;
  get(id: string): Promise<StoredSpace | undefined>;
  /**
   * The spaces matching the filter in creation order, a page of at most `pageSize` at a time: each page is
   * one keyset query (by the internal space number), so memory stays bounded and no statement stays open
   * between pages.
   */
  list(filter: SpaceListFilter, pageSize: number): AsyncIterable<StoredSpace[]>;
  /** Read-modify-write of the definition inside one transaction; undefined when the space is unknown. */
  update(id: string, change: (current: StoredSpace) => Record<string, unknown>): Promise<StoredSpace | undefined>;
  /** Removes the space and all its features; undefined when unknown. */
  delete(id: string): Promise<StoredSpace | undefined>;
}

/** A feature ready to be stored: its JSON text plus the columns that index it. */
export interface FeatureWrite {
  id: string;
  json: string;
  geometryType: string | null;
  bbox: BBox | null;
  tags: string[];
}

export interface WritePlan {
  upserts: FeatureWrite[];
  deletes: string[];
  timestamp: number;
}

/**
 * Decides a write from the stored state of the affected features (id → stored JSON text).
 * It runs inside the storage transaction, so its decisions (exists/not, uuid checks) cannot
 * race with another writer; throwing aborts the whole write.
 */
export type WritePlanner<T> = (existing: ReadonlyMap<string, string>) => { plan: WritePlan; result: T };

export interface TagCount { key: string; count: number }
export interface PropertyStatistic { key: string; count: number; datatype?: string }

export interface SpaceStatistics {
  count: number;
  dataSize: number;
  bbox: BBox | null;
  geometryTypes: string[];
  tags: TagCount[];
  properties: PropertyStatistic[];
  /** True when the property statistics come from a sample of a large space. */
  propertiesEstimated: boolean;
}

export interface FeatureStore {
  /** Throws `spaceOfFeaturesNotFound` when the space is gone. */
  write<T>(spaceId: string, ids: readonly string[], planner: WritePlanner<T>): Promise<T>;
  /** Deletes the features matching the filter (all of them for an empty filter); returns how many. */
  deleteMatching(spaceId: string, filter: FeatureFilter): Promise<number>;
  /**
   * Streams matching features in insertion order (or in the order of `ids`), a page of rows at a time:
   * one await per page instead of per row keeps large reads cheap.
   */
  query(query: FeatureQuery): AsyncIterable<FeatureRow[]>;
  /** The same features as `query`, each page joined into one text by the database: reads that transform nothing. */
  queryText(query: FeatureQuery): AsyncIterable<FeatureTextPage>;
  count(spaceId: string, filter: FeatureFilter): Promise<number>;
  statistics(spaceId: string): Promise<SpaceStatistics>;
}

export interface AccountRecord {
  id: string;
  username: string;
  passwordHash: string;
  admin: boolean;
  createdAt: number;
}

export interface TokenRecord {
  tid: string;
  aid: string;
  /** sha256 of the bearer string; the string itself is never stored. */
  secretHash: string;
  /** The token claims (cid, urm, limits, iat, exp, description, metadata). */
  claims: Record<string, unknown>;
}

export interface AccessStore {
  createAccount(account: AccountRecord): Promise<void>;
  findAccountByUsername(username: string): Promise<AccountRecord | undefined>;
  createToken(token: TokenRecord): Promise<void>;
  findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined>;
}

export interface Storage {
  readonly engine: string;
  readonly spaces: SpaceStore;
  readonly features: FeatureStore;
  readonly access: AccessStore;
  close(): Promise<void>;
}
