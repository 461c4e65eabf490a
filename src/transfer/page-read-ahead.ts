// The export's pages in order, each sequence page asked for as soon as the headers of the page before it name it, up to a bound of pages asked for and not yet taken.
import type { AnswerHead, BytesAnswer } from './hub-client.js';

/** A page asked for: its headers (undefined when the request failed before any arrived) and its whole answer. */
export interface PageFetch {
  head: Promise<AnswerHead | undefined>;
  answer: Promise<BytesAnswer>;
}

export const SEQUENCE_TYPE = 'application/geo+json-seq';

/** The `handle` of the `rel="next"` link of a sequence page's `Link` header (feature-reads.ts: the same request with the next handle); undefined on the last page. */
export function nextHandle(link: string | undefined): string | undefined {
  for (const value of (link ?? '').split(',')) {
    const found = /^\s*<([^>]*)>(.*)$/.exec(value);
    if (found === null || !/;\s*rel="?next"?(;|\s|$)/.test(found[2])) continue;
    return new URL(found[1], 'http://hub.invalid/').searchParams.get('handle') ?? undefined;
  }
  return undefined;
}

/**
 * Pages are taken in the order they were asked for. A sequence page's `Link` header arrives before its body and names
 * the next page, so the next page is asked for from the headers' callback, not when the export gets to the page: the
 * hub computes it while this process still reads and writes the pages before it. At most `ahead` pages are asked for
 * and not yet taken (besides the one being written), which bounds what is held: their bodies, as they arrive.
 * A GeoJSON page names the next one in its body; the caller asks for it (`add`) once it has read it.
 */
export class PageReadAhead {
  private readonly queue: PageFetch[] = [];
  /** The newest page asked for, and the next handle its headers named once they arrived (null: not yet). */
  private newest: PageFetch | undefined;
  private following: string | undefined | null = null;
  private stopped = false;

  constructor(private readonly ask: (handle: string) => PageFetch, private readonly ahead: number) {}

  add(page: PageFetch): void {
    // Handled here too: a page that fails ends the export where its answer is awaited, not as an unhandled rejection.
    page.answer.catch(() => undefined);
    this.queue.push(page);
    this.newest = page;
    this.following = null;
    void page.head.then((head) => {
      if (this.newest !== page) return;
      this.following = head?.contentType === SEQUENCE_TYPE ? nextHandle(head.link) : undefined;
      this.fill();
    });
  }

  /** The next page's answer, in order; undefined when none is asked for (the last page was taken, or a GeoJSON page's successor is not added yet). */
  async next(): Promise<BytesAnswer | undefined> {
    const page = this.queue.shift();
    if (page === undefined) return undefined;
    this.fill();
    // add()'s reaction to these headers was registered first, so it has run (and asked for the page after) when this
    // resumes: a page's successor is in the queue before its answer is handed on, and never missed.
    await page.head;
    return page.answer;
  }

  /** Asks for no further page: the export ended (or failed) before the last one. */
  stop(): void {
    this.stopped = true;
  }

  private fill(): void {
    if (this.stopped || typeof this.following !== 'string' || this.queue.length >= this.ahead) return;
    const handle = this.following;
    this.add(this.ask(handle));
  }
}
