/**
 * `$(VAR)` expansion, as third_party/forked/golang/expansion/expand.go does it
 * for container commands, args and env values:
 *
 *   $(NAME)   the mapping's value for NAME (any characters up to the first `)`)
 *   $$        a literal `$` (so `$$(NAME)` is the text `$(NAME)`)
 *   $x        left as written, for any other x; a `$` at the end too
 *   $(NAME    an unterminated reference is left as written
 *
 * With mappingFuncFor, a name no map has is left as written (`$(NAME)`).
 */

const OPERATOR = '$';
const REFERENCE_OPENER = '(';
const REFERENCE_CLOSER = ')';

/** syntaxWrap: `$(input)`. */
function syntaxWrap(input: string): string {
  return `${OPERATOR}${REFERENCE_OPENER}${input}${REFERENCE_CLOSER}`;
}

/** MappingFuncFor: the first map that has the name gives its value; else the reference stays as written. */
export function mappingFuncFor(...context: ReadonlyMap<string, string>[]): (name: string) => string {
  return (name) => {
    for (const vars of context) {
      const value = vars.get(name);
      if (value !== undefined) return value;
    }
    return syntaxWrap(name);
  };
}

/** Expand: every variable reference in `input` replaced through `mapping`. */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== OPERATOR || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const { read, isVar, advance } = tryReadVariableName(input.slice(cursor + 1));
    out += isVar ? mapping(read) : read;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** tryReadVariableName: what follows a `$`, whether it is a name to map, and how many characters it took. */
function tryReadVariableName(input: string): { read: string; isVar: boolean; advance: number } {
  const first = String.fromCodePoint(input.codePointAt(0) ?? 0);
  switch (first) {
    case OPERATOR:
      // An escaped operator.
      return { read: first, isVar: false, advance: first.length };
    case REFERENCE_OPENER: {
      const close = input.indexOf(REFERENCE_CLOSER, 1);
      if (close >= 0) return { read: input.slice(1, close), isVar: true, advance: close + 1 };
      // An incomplete reference.
      return { read: `${OPERATOR}${REFERENCE_OPENER}`, isVar: false, advance: 1 };
    }
    default:
      // An operator that does not begin an expression.
      return { read: `${OPERATOR}${first}`, isVar: false, advance: first.length };
  }
}
