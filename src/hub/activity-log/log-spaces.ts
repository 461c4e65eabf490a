// The log spaces of activity logs: created, kept in step with and deleted with the space they log.
import { hubError } from '../../core/errors.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { Storage, StoredSpace } from '../../storage/storage.js';
import { deepEqual } from '../merge-patch.js';
import { logListenerOf, logSpaceId } from './log-listener.js';

/** The member of a log space's definition naming the space it logs; clients cannot set it (it is no space field). */
export const LOG_OF = 'activityLogOf';

/** The members a log space copies from its source: what rights on it are judged by (authorization.ts spaceResource). */
const MIRRORED = ['owner', 'cid', 'shared', 'packages'] as const;

/** The space a log space logs, undefined for any other space. */
export function logSourceOf(definition: SpaceDefinition): string | undefined {
  const source = definition[LOG_OF];
  return typeof source === 'string' ? source : undefined;
}

function mirrored(definition: SpaceDefinition): Partial<SpaceDefinition> {
  const copy: Partial<SpaceDefinition> = {};
  for (const name of MIRRORED) if (definition[name] !== undefined) copy[name] = definition[name] as never;
  return copy;
}

/**
 * A log space is read-only to clients (feature writes answer 405): only the source's writes append to it.
 * PATCH and DELETE of it are refused while its source logs into it.
 */
export class LogSpaces {
  constructor(private readonly storage: Storage, private readonly defaultStorageId: string) {}

  private definitionFor(source: StoredSpace, now: number): SpaceDefinition {
    return {
      title: `Activity log of ${source.id}`, ...mirrored(source.definition),
      readOnly: true, storage: { id: this.defaultStorageId }, [LOG_OF]: source.id, createdAt: now, updatedAt: now,
    };
  }

  /** Before space `id` gets the listener: its log space id must be free, or already its log space. */
  async checkFree(id: string): Promise<void> {
    const found = await this.storage.spaces.get(logSpaceId(id));
    if (found && logSourceOf(found.definition) !== id) throw hubError('activityLogSpaceTaken', { source: id, id: found.id });
  }

  /**
   * A log space of `sourceId` found when the source is only now getting its log (created, or given the listener) is
   * left from an earlier space of that id: its delete ended between the source's commit and the log's (a crash). It is
   * deleted, so that the new space neither fails on its id nor takes over, and shows to its owner, the old log.
   */
  private async removeLeftover(logId: string, sourceId: string): Promise<void> {
    const leftover = await this.storage.spaces.get(logId);
    if (leftover && logSourceOf(leftover.definition) === sourceId) await this.storage.spaces.delete(logId);
  }

  /** After a space was created: its log space goes next to it, or the creation is undone. */
  async created(source: StoredSpace): Promise<void> {
    const config = logListenerOf(source.definition);
    if (!config) return;
    try {
      await this.removeLeftover(config.spaceId, source.id);
      const now = Date.now();
      await this.storage.spaces.create(config.spaceId, this.definitionFor(source, now), now, source.key);
    } catch (error) {
      await this.storage.spaces.delete(source.id);
      throw error;
    }
  }

  /** After a space was changed: creates its log space, copies the members rights depend on, or deletes it with the listener. */
  async changed(before: SpaceDefinition, source: StoredSpace): Promise<void> {
    const was = logListenerOf(before);
    const config = logListenerOf(source.definition);
    if (!config) {
      if (was) await this.storage.spaces.delete(was.spaceId);
      return;
    }
    if (!was) await this.removeLeftover(config.spaceId, source.id);
    const log = await this.storage.spaces.get(config.spaceId);
    if (!log) {
      const now = Date.now();
      await this.storage.spaces.create(config.spaceId, this.definitionFor(source, now), now, source.key);
      return;
    }
    const wanted = mirrored(source.definition);
    if (logSourceOf(log.definition) !== source.id || deepEqual(mirrored(log.definition), wanted)) return;
    await this.storage.spaces.update(log.id, (current) => {
      const definition: SpaceDefinition = { ...current.definition, updatedAt: Date.now() };
      for (const name of MIRRORED) delete definition[name];
      return { ...definition, ...wanted };
    });
  }

  /** After a space was deleted: its log space goes with it. */
  async deleted(source: StoredSpace): Promise<void> {
    const config = logListenerOf(source.definition);
    if (config) await this.storage.spaces.delete(config.spaceId);
  }

  /** A log space may be deleted only once its source is gone or logs elsewhere. */
  async checkDeletable(space: StoredSpace): Promise<void> {
    const sourceId = logSourceOf(space.definition);
    if (sourceId === undefined) return;
    const source = await this.storage.spaces.get(sourceId);
    if (source && logListenerOf(source.definition)?.spaceId === space.id) throw hubError('activityLogManaged', { id: space.id, source: sourceId });
  }
}

/** A log space's definition cannot be changed by clients. */
export function refuseLogSpaceChange(id: string, definition: SpaceDefinition): void {
  const source = logSourceOf(definition);
  if (source !== undefined) throw hubError('activityLogManaged', { id, source });
}
