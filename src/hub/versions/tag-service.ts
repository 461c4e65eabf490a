// Tags: names for versions of a space (ADR 002, "Changesets and tags"), usable wherever a version is; pruning keeps the states they show.
import { hubError } from '../../core/errors.js';
import type { Storage, TagRecord } from '../../storage/storage.js';
import type { Claims } from '../access/claims.js';
import type { FeatureSource } from '../feature-source.js';
import type { SpaceResolver } from '../resolve/space-resolver.js';
import type { Pruning } from './pruning.js';
import { authorOf, checkReadable, isTagId, keepsHistory } from './space-versions.js';

/** The reference hub's limit: a description is shorter than 255 characters. */
const MAX_DESCRIPTION = 254;

/** A tag as the API shows it: id, version, description (when it has one), author, createdAt. */
export type TagView = Record<string, unknown>;

const viewOf = (tag: TagRecord): TagView => ({
  id: tag.id, version: tag.version, ...(tag.description === undefined ? {} : { description: tag.description }), author: tag.author, createdAt: tag.createdAt,
});

/** What a POST or PATCH body asks for; `author` and `createdAt` are the hub's and ignored, as the reference hub does. */
interface TagInput {
  id?: string;
  version?: number;
  description?: string;
}

function inputOf(body: unknown): TagInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw hubError('invalidTag', { problem: 'the body must be a JSON object' });
  const { id, version, description } = body as Record<string, unknown>;
  if (id !== undefined && typeof id !== 'string') throw hubError('invalidTag', { problem: 'id must be a string' });
  if (version !== undefined && version !== null && (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0)) {
    throw hubError('invalidTag', { problem: 'version must be a version number (an integer of at least 0); leave it out for HEAD' });
  }
  if (description !== undefined && description !== null && typeof description !== 'string') throw hubError('invalidTag', { problem: 'description must be a string' });
  if (typeof description === 'string' && description.length > MAX_DESCRIPTION) {
    throw hubError('invalidTag', { problem: `the description has ${description.length} characters; it must be shorter than ${MAX_DESCRIPTION + 1}` });
  }
  return { id, version: typeof version === 'number' ? version : undefined, description: typeof description === 'string' ? description : undefined };
}

function checkId(id: string): void {
  if (!isTagId(id)) {
    throw hubError('invalidTag', {
      problem: `the id "${id.slice(0, 60)}" is not a tag id: 1 to 50 characters, no digit first, no whitespace, control character, colon or "..", and not HEAD, main or *`,
    });
  }
}

export class TagService {
  constructor(private readonly storage: Storage, private readonly spaces: SpaceResolver, private readonly pruning: Pruning) {}

  private async source(caller: Claims, spaceId: string, change: boolean): Promise<FeatureSource> {
    return (await this.spaces.open(caller, spaceId)).history(change);
  }

  /** The version a tag may name: one the space can be read at now (HEAD when none is given). */
  private async version(source: FeatureSource, asked: number | undefined): Promise<number> {
    if (!keepsHistory(source.space.definition)) throw hubError('noHistory');
    const versions = await source.versions();
    const version = asked ?? versions.head;
    checkReadable(source.space.definition, versions, version);
    return version;
  }

  async list(caller: Claims, spaceId: string): Promise<TagView[]> {
    return (await (await this.source(caller, spaceId, false)).tags()).map(viewOf);
  }

  /** The tag of that id; a text that cannot be a tag id names none (and is not handed to the storage). */
  private async stored(source: FeatureSource, tagId: string): Promise<TagRecord | undefined> {
    return isTagId(tagId) ? source.tag(tagId) : undefined;
  }

  async get(caller: Claims, spaceId: string, tagId: string): Promise<TagView> {
    const tag = await this.stored(await this.source(caller, spaceId, false), tagId);
    if (!tag) throw hubError('tagNotFound', { tag: tagId.slice(0, 60) });
    return viewOf(tag);
  }

  async create(caller: Claims, spaceId: string, body: unknown): Promise<TagView> {
    const source = await this.source(caller, spaceId, true);
    const input = inputOf(body);
    if (input.id === undefined) throw hubError('invalidTag', { problem: 'the tag needs an id' });
    checkId(input.id);
    const tag: TagRecord = { id: input.id, version: await this.version(source, input.version), author: authorOf(caller), createdAt: Date.now(),
      ...(input.description === undefined ? {} : { description: input.description }) };
    if (!(await this.storage.history.createTag(source.space.key, tag))) throw hubError('tagExists', { tag: tag.id });
    return viewOf(tag);
  }

  /** Moves the tag to another version and/or changes its description; members left out stay as they are. */
  async update(caller: Claims, spaceId: string, tagId: string, body: unknown): Promise<TagView> {
    const source = await this.source(caller, spaceId, true);
    const input = inputOf(body);
    if (input.id !== undefined && input.id !== tagId) throw hubError('invalidTag', { problem: 'the id in the body differs from the id in the path' });
    const current = await this.stored(source, tagId);
    if (!current) throw hubError('tagNotFound', { tag: tagId.slice(0, 60) });
    const tag: TagRecord = { ...current, version: input.version === undefined ? current.version : await this.version(source, input.version),
      ...(input.description === undefined ? {} : { description: input.description }) };
    if (!(await this.storage.history.updateTag(source.space.key, tag))) throw hubError('tagNotFound', { tag: tagId.slice(0, 60) });
    if (tag.version !== current.version) this.pruning.schedule(spaceId);
    return viewOf(tag);
  }

  /** The states only this tag kept become prunable. */
  async delete(caller: Claims, spaceId: string, tagId: string): Promise<TagView> {
    const source = await this.source(caller, spaceId, true);
    const deleted = isTagId(tagId) ? await this.storage.history.deleteTag(source.space.key, tagId) : undefined;
    if (!deleted) throw hubError('tagNotFound', { tag: tagId.slice(0, 60) });
    this.pruning.schedule(spaceId);
    return viewOf(deleted);
  }
}
