// Reads a filter in either CQL2 encoding into its CQL2-JSON tree; what does not parse is a 400 naming where.
import { hubError } from '../../../core/errors.js';
import { parse, SyntaxError as Cql2SyntaxError } from './cql2-text-parser.js';

export type FilterLanguage = 'cql2-text' | 'cql2-json';

function parseText(text: string): unknown {
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof Cql2SyntaxError) {
      const { offset, line, column } = error.location.start;
      throw hubError('ogcFilterSyntax', { problem: error.message, line, column, offset });
    }
    // The generated parser recurses once per nesting level: a hostile depth overflows the stack.
    if (error instanceof RangeError) throw hubError('ogcInvalidFilter', { problem: 'the filter nests too deeply' });
    throw error;
  }
}

/** JSON.parse names the offset of what it could not read in its message (V8: "… at position N", or "… end of JSON input"). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const message = (error as Error).message;
    const at = /position (\d+)/u.exec(message);
    const offset = at ? Number(at[1]) : text.length;
    const before = text.slice(0, offset).split('\n');
    throw hubError('ogcFilterSyntax', { problem: message.replace(/ in JSON at position.*$/su, ''), line: before.length, column: before[before.length - 1].length + 1, offset });
  }
}

export function parseFilter(text: string, language: FilterLanguage): unknown {
  return language === 'cql2-json' ? parseJson(text) : parseText(text);
}
