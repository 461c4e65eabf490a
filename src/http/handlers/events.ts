// Handler of the event stream (GET /hub/spaces/{id}/events, docs/events.md): Server-Sent Events, written as fast as the client takes them.
import type { ServerResponse } from 'node:http';
import { once } from 'node:events';
import { hubError } from '../../core/errors.js';
import type { BBox } from '../../geo/bbox.js';
import type { EventFeed } from '../../hub/events/event-feed.js';
import { leaveInFlight } from '../load-shedding.js';
import { parsePropertyFilters } from '../query/property-filters.js';
import { callerOf, type HandlerContext } from '../request-context.js';
import { coordinate } from './spatial-reads.js';

/** A client cut off after its last event gets this long to take it (and what came before it) before its connection is closed. */
const LAST_WORDS_MS = 60_000;

/** The streams open on this node, ended when it stops (a stream never ends by itself). */
const open = new Set<EventFeed>();

/** Ends every stream of this node: graceful stops wait for requests in progress, which streams always are. */
export function endEventStreams(): void {
  for (const feed of open) feed.close();
}

/** `Last-Event-ID` (what EventSource sends when it reconnects, so it wins over the URL's `since`), else `?since=`. */
function sinceOf(context: HandlerContext): number | undefined {
  const header = context.request.headers['last-event-id'];
  const [name, given] = typeof header === 'string' && header !== '' ? ['Last-Event-ID', header] : ['since', context.query.first('since')];
  if (given === undefined || given === '') return undefined;
  if (!/^(-1|\d{1,15})$/.test(given.trim())) throw hubError('invalidParameter', { name, problem: 'expected a version number (an integer of at least 0), or -1 for every kept version' });
  return Number(given);
}

/** west, south, east and north together, or none. */
function cornersOf(context: HandlerContext): BBox | undefined {
  const names = ['west', 'south', 'east', 'north'];
  const given = names.filter((name) => context.query.first(name) !== undefined);
  if (given.length === 0) return undefined;
  if (given.length < names.length) {
    throw hubError('invalidParameter', { name: names.find((name) => !given.includes(name)) ?? 'west', problem: 'a bbox needs all of west, south, east and north' });
  }
  return [coordinate(context, 'west', 'longitude'), coordinate(context, 'south', 'latitude'), coordinate(context, 'east', 'longitude'), coordinate(context, 'north', 'latitude')];
}

/** Whether the client took what was buffered within `ms`. */
async function drained(response: ServerResponse, ms: number): Promise<boolean> {
  const timeout = AbortSignal.timeout(ms);
  try {
    await once(response, 'drain', { signal: timeout });
    return true;
  } catch {
    return false;
  }
}

export async function spaceEvents(context: HandlerContext): Promise<unknown> {
  const since = sinceOf(context);
  const filter = { tags: context.query.tags(), properties: parsePropertyFilters(context.query), corners: cornersOf(context) };
  const feed = await context.hub.events.open(callerOf(context), context.params.spaceId, { since, filter });
  const { reply } = context;
  reply.hijack();
  const response = reply.raw;
  // The headers set so far (CORS, the stream id) go out with the status line; Fastify no longer sends the reply.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    // Proxies such as nginx would otherwise hold the events back.
    'x-accel-buffering': 'no',
    // A stream's connection carries nothing after it: EventSource asks again on a new one.
    connection: 'close',
  });
  leaveInFlight(context.request.raw);
  open.add(feed);
  response.once('close', () => feed.close());
  const { bufferBytes, stallMs } = context.hub.events;
  try {
    for await (const text of feed) {
      if (response.destroyed) break;
      // Nothing more is read for the stream while its buffer is full: a slow client slows its stream down, and one that
      // takes nothing for stallMs is cut off, with a last event naming where to resume when it is between events.
      if (response.write(text) || response.writableLength <= bufferBytes || (await drained(response, stallMs))) continue;
      const socket = response.socket;
      if (feed.atBoundary) {
        response.end(feed.slowConsumer());
        setTimeout(() => socket?.destroy(), LAST_WORDS_MS).unref();
      } else {
        // Cut in the middle of an event, which the client drops: its Last-Event-ID is the last version it got whole.
        socket?.destroy();
      }
      return undefined;
    }
    response.end();
  } catch (error) {
    // The status line is sent: the stream can only end. The client resumes by its Last-Event-ID.
    context.request.log.warn(`The event stream of space ${context.params.spaceId} ended: ${error instanceof Error ? error.name : 'error'}`);
    response.socket?.destroy();
  } finally {
    open.delete(feed);
    feed.close();
  }
  return undefined;
}
