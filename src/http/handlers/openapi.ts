// Handler of the hub's OpenAPI document as YAML, where the original hub serves its own (`/hub/static/openapi/stable.yaml`).
import { stringify } from 'yaml';
import { apiDocument } from '../api-document.js';
import { sendTextRead } from '../reply/read-reply.js';
import type { HandlerContext } from '../request-context.js';
import { routes } from '../routes.js';
import { linkBase } from './ogc-request.js';

export async function openApiYaml(context: HandlerContext): Promise<unknown> {
  const document = apiDocument(routes, linkBase(context).origin, context.hub.info.version);
  return sendTextRead(context.request, context.reply, stringify(document), 'application/yaml; charset=utf-8');
}
