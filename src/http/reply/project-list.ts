// Streams project lists (API.md 10) from the stored texts: the plain array, or the page object with its handle.
import { Readable } from 'node:stream';
import type { ProjectPage } from '../../hub/projects/project-service.js';

/** Bytes buffered ahead of the socket, as for the space list (json-array.ts). */
const AHEAD_BYTES = 1 << 20;

async function* projectTexts(pages: AsyncIterable<ProjectPage>, onPage: (page: ProjectPage) => void): AsyncIterable<string> {
  let first = true;
  for await (const page of pages) {
    onPage(page);
    yield (first ? '' : ',') + page.projects.join(',');
    first = false;
  }
}

async function* arrayText(pages: AsyncIterable<ProjectPage>): AsyncIterable<string> {
  yield '[';
  yield* projectTexts(pages, () => {});
  yield ']';
}

/** `handle` is the one given when no project follows it, so a client polling at the end keeps its place. */
async function* pageText(pages: AsyncIterable<ProjectPage>, after: number): AsyncIterable<string> {
  let handle = after;
  yield '{"projects":[';
  yield* projectTexts(pages, (page) => { handle = page.handle; });
  yield `],"handle":${handle}}`;
}

export function projectArrayBody(pages: AsyncIterable<ProjectPage>): Readable {
  return Readable.from(arrayText(pages), { objectMode: false, highWaterMark: AHEAD_BYTES });
}

export function projectPageBody(pages: AsyncIterable<ProjectPage>, after: number): Readable {
  return Readable.from(pageText(pages, after), { objectMode: false, highWaterMark: AHEAD_BYTES });
}
