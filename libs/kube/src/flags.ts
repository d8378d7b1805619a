/**
 * The kubelet's list-of-pairs flags, as k8s.io/component-base/cli/flag parses
 * them: map_string_string.go MapStringString (`--node-labels
 * key=value,key=value`) and colon_separated_multimap_string_string.go
 * (`--manifest-url-header Name:value,Name:value`). Pairs are separated by
 * commas; a blank pair is skipped; key and value are trimmed; the value is
 * everything after the first separator. A malformed pair throws, naming the
 * setting, so a service refuses to start on it.
 *
 * Upstream's multimap keeps every value of a repeated header; here the last
 * one wins, as the manifest fetcher sends one value per header.
 */

function parsePairs(value: string | undefined, separator: '=' | ':', setting: string, shape: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of (value ?? '').split(',')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const at = pair.indexOf(separator);
    const key = at < 0 ? '' : pair.slice(0, at).trim();
    if (key === '') throw new Error(`${setting}: "${pair}" is not a ${shape} pair`);
    out[key] = pair.slice(at + 1).trim();
  }
  return out;
}

/** MapStringString: `key=value,key=value` as a record; `setting` names the flag or variable in errors. */
export function parseMapStringString(value: string | undefined, setting: string): Record<string, string> {
  return parsePairs(value, '=', setting, 'key=value');
}

/** ColonSeparatedMultimapStringString, one value per key: `Name:value,Name:value` as a record. */
export function parseColonSeparatedMapStringString(value: string | undefined, setting: string): Record<string, string> {
  return parsePairs(value, ':', setting, 'Name:value');
}
