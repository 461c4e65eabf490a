// A geometry's JSON text without its third coordinates when every one of them is zero: the hub pads 2D input with z = 0.

const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

const startsNumber = (code: number) => code === MINUS || (code >= DIGIT_0 && code <= DIGIT_9);

/**
 * `geometry` (JSON text as JSON.stringify writes it) with 2D positions when every position has three numbers and
 * each third is zero; unchanged when any z is not zero, when a position has four or more numbers, or when the
 * positions are 2D already. A position is an array that starts with a number: GeoJSON nests no array in one.
 * Scanning the text instead of parsing it keeps an OGC page streaming at about the cost of copying it.
 */
export function zeroZDropped(geometry: string): string {
  const cuts: number[] = [];
  let at = geometry.indexOf('[');
  while (at >= 0) {
    if (at + 1 < geometry.length && startsNumber(geometry.charCodeAt(at + 1))) {
      const close = geometry.indexOf(']', at);
      if (close < 0) return geometry;
      const first = geometry.indexOf(',', at);
      const second = first >= 0 && first < close ? geometry.indexOf(',', first + 1) : -1;
      if (second >= 0 && second < close) {
        const third = geometry.indexOf(',', second + 1);
        if (third >= 0 && third < close) return geometry;
        if (Number(geometry.slice(second + 1, close)) !== 0) return geometry;
        cuts.push(second, close);
      }
      at = geometry.indexOf('[', close);
    } else {
      at = geometry.indexOf('[', at + 1);
    }
  }
  if (cuts.length === 0) return geometry;
  let result = '';
  let from = 0;
  for (let cut = 0; cut < cuts.length; cut += 2) {
    result += geometry.slice(from, cuts[cut]);
    from = cuts[cut + 1];
  }
  return result + geometry.slice(from);
}

