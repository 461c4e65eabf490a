// Handlers of the space routes: list, create, read, patch and delete (API.md 3).
import { hubError } from '../../core/errors.js';
import type { ComparisonOperator } from '../../core/space-query.js';
import type { OwnerFilter, SpaceListQuery } from '../../hub/spaces/space-service.js';
import { bodyStream } from '../body/body-stream.js';
import { readJsonObject } from '../body/json-body.js';
import { formDecode } from '../query/raw-query.js';
import { jsonArrayBody } from '../reply/json-array.js';
import { started } from '../reply/read-reply.js';
import { callerOf, type HandlerContext } from '../request-context.js';

const OPERATORS: Array<[string, ComparisonOperator]> = [
  ['=gte=', '>='], ['=lte=', '<='], ['=gt=', '>'], ['=lt=', '<'], ['>=', '>='], ['<=', '<='], ['!=', '!='], ['>', '>'], ['<', '<'], ['=', '='],
];

/** `contentUpdatedAt>=1597092085740` or `contentUpdatedAt=gte=…`; comma-separated values are OR-ed (API.md 3.6). */
function contentUpdatedAtFilter(context: HandlerContext): SpaceListQuery['contentUpdatedAt'] {
  const name = 'contentUpdatedAt';
  const segment = context.query.rawSegmentsStartingWith(name, true)[0];
  if (segment === undefined) return undefined;
  const rest = formDecode(segment.slice(name.length))?.replace(/^(>|<)(.*)=$/, '$1$2');
  // An empty value means no filter, as for `tags=` (API.md 1.2).
  if (rest === '' || rest === '=') return undefined;
  const operator = OPERATORS.find(([symbol]) => rest?.startsWith(symbol));
  const texts = operator && rest ? rest.slice(operator[0].length).split(',') : [];
  if (!operator || texts.some((value) => !/^\d+$/.test(value))) {
    throw hubError('invalidParameter', { name, problem: `"${segment}" is not an operator (=, !=, >, >=, <, <=, =gt=, =gte=, =lt=, =lte=) followed by timestamps in milliseconds` });
  }
  return { op: operator[1], values: texts.map(Number) };
}

function ownerFilter(context: HandlerContext): OwnerFilter {
  const owner = context.query.first('owner');
  if (owner === undefined || owner === '' || owner === 'me') return 'me';
  if (owner === 'others' || owner === '*') return owner;
  return { owner };
}

/** The array streams a page of spaces at a time; the first page is read before the status line, so a storage failure is an error answer. */
export async function listSpaces(context: HandlerContext): Promise<unknown> {
  const pages = await started(context.hub.spaces.list(callerOf(context),
    {
      owner: ownerFilter(context), contentUpdatedAt: contentUpdatedAtFilter(context),
      includeRights: context.query.boolean('includeRights', false), includeConnectors: context.query.boolean('includeConnectors', false),
    }));
  return context.reply.type('application/json').send(jsonArrayBody(pages));
}

const spaceBody = (context: HandlerContext) => readJsonObject(bodyStream(context.request.raw, context.maxBody), 'invalidJsonSpace');

export async function createSpace(context: HandlerContext): Promise<unknown> {
  const space = await context.hub.spaces.create(callerOf(context), await spaceBody(context));
  return context.reply.type('application/json').send(space);
}

export async function getSpace(context: HandlerContext): Promise<unknown> {
  const space = await context.hub.spaces.get(callerOf(context), context.params.spaceId);
  return context.reply.type('application/json').send(space);
}

export async function patchSpace(context: HandlerContext): Promise<unknown> {
  const space = await context.hub.spaces.patch(callerOf(context), context.params.spaceId, await spaceBody(context));
  return context.reply.type('application/json').send(space);
}

/** 204, or 200 with the deleted space when the client asks for exactly `application/json` (API.md 3.5). */
export async function deleteSpace(context: HandlerContext): Promise<unknown> {
  const space = await context.hub.spaces.delete(callerOf(context), context.params.spaceId);
  if (context.request.headers.accept === 'application/json') return context.reply.type('application/json').send(space);
  return context.reply.code(204).send();
}
