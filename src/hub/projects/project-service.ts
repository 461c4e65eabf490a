// Projects (API.md 10): saved map configurations, readable by their owner or by anyone once published, changed only by their owner.
import { hubError } from '../../core/errors.js';
import type { ProjectListFilter, Storage, StoredProject } from '../../storage/storage.js';
import type { Claims } from '../access/claims.js';
import { newProjectId } from '../ids.js';
import { applyPatch } from '../merge-patch.js';
import { checkProjectId, checkSameId, clientMembers, isProjectId, projectRecord, splitStored } from './project-fields.js';

export interface ProjectListQuery {
  /** Every account's published projects instead of the caller's own. */
  published: boolean;
  /** The handle of the page before (the last sequence number it held); 0 starts at the beginning. */
  after: number;
  /** At most this many projects; all of them when undefined. */
  limit?: number;
}

export interface ProjectPage {
  /** The projects' JSON texts, as stored. */
  projects: string[];
  /** The handle that continues after this page. */
  handle: number;
}

/** Projects read per storage query: with MAX_PROJECT_BYTES it bounds the memory of one list answer. */
const PROJECT_PAGE_SIZE = 100;

const notFound = () => hubError('projectNotFound');
const notOwner = (action: string) => hubError('projectForbidden', { problem: `Only the owner of the project may ${action} it.` });

export class ProjectService {
  constructor(private readonly storage: Storage) {}

  /** The caller's own projects, or every published one, a storage page at a time in sequence order. */
  async *list(claims: Claims, query: ProjectListQuery): AsyncIterable<ProjectPage> {
    const filter: ProjectListFilter = query.published ? { published: true } : { owner: claims.aid };
    let remaining = query.limit ?? Infinity;
    let after = query.after;
    while (remaining > 0) {
      const size = Math.min(PROJECT_PAGE_SIZE, remaining);
      const rows = await this.storage.projects.list(filter, after, size);
      if (rows.length > 0) {
        after = rows[rows.length - 1].seq;
        remaining -= rows.length;
        yield { projects: rows.map((row) => row.json), handle: after };
      }
      if (rows.length < size) return;
    }
  }

  /** The owner reads any of their projects, anybody else only published ones. */
  async get(claims: Claims, id: string): Promise<string> {
    const project = isProjectId(id) ? await this.storage.projects.get(id) : undefined;
    if (!project) throw notFound();
    if (project.owner !== claims.aid && !project.published) {
      throw hubError('projectForbidden', { problem: 'The project is not published; only its owner may read it.' });
    }
    return project.json;
  }

  /** A new project of the caller's; an id that exists already is a 409, whoever owns it. */
  async create(claims: Claims, input: Record<string, unknown>): Promise<string> {
    const id = input.id === undefined || input.id === null ? newProjectId() : checkProjectId(input.id);
    const now = Date.now();
    const record = projectRecord(id, clientMembers(input), claims.aid, now, now);
    const stored = await this.storage.projects.write(id, (current) => {
      if (current) throw hubError('projectExists', { id });
      return record;
    });
    return stored.json;
  }

  /** Replaces the whole project (the members not given are gone), or creates it for the caller. */
  async replace(claims: Claims, id: string, input: Record<string, unknown>): Promise<string> {
    checkProjectId(id);
    checkSameId(input, id);
    const members = clientMembers(input);
    const now = Date.now();
    const stored = await this.storage.projects.write(id, (current) => {
      if (current) this.checkOwner(claims, current, 'replace');
      return projectRecord(id, members, claims.aid, current ? splitStored(current.json).createdAt : now, now);
    });
    return stored.json;
  }

  /** Merges (API.md 3.4 semantics: `null` removes a member, objects merge, anything else replaces). */
  async patch(claims: Claims, id: string, input: Record<string, unknown>): Promise<string> {
    if (!isProjectId(id)) throw notFound();
    checkSameId(input, id);
    const changes = clientMembers(input);
    const stored = await this.storage.projects.write(id, (current) => {
      if (!current) throw notFound();
      this.checkOwner(claims, current, 'change');
      const { createdAt, members } = splitStored(current.json);
      const merged = applyPatch(members, changes);
      // Nothing changed, so nothing is written and last_update stays.
      if (!merged.changed) return undefined;
      return projectRecord(id, merged.result, current.owner, createdAt, Date.now());
    });
    return stored.json;
  }

  async delete(claims: Claims, id: string): Promise<void> {
    const project = isProjectId(id) ? await this.storage.projects.get(id) : undefined;
    if (!project) throw notFound();
    this.checkOwner(claims, project, 'delete');
    // Deleted meanwhile by its owner's other request: gone for this one too.
    if (!(await this.storage.projects.delete(id, claims.aid))) throw notFound();
  }

  private checkOwner(claims: Claims, project: StoredProject, action: string): void {
    if (project.owner !== claims.aid) throw notOwner(action);
  }
}
