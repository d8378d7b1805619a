/**
 * Reading pod manifests, as the kubelet's file and http sources do
 * (pkg/kubelet/config/common.go tryDecodeSinglePod / tryDecodePodList):
 * text -> documents -> raw pods. Nothing here defaults or validates a pod;
 * that is defaults.ts, static-pod.ts and validation/. Nothing throws: a
 * problem comes back as an `error` string meant for a person.
 */
import { parseAllDocuments } from 'yaml';
import { isRecord } from '@app/contracts';

/** One non-empty document of a manifest. */
export interface ManifestDocument {
  /**
   * The document's position in the stream, from 0, counting the empty
   * documents that were skipped, so `index + 1` names it for a person.
   */
  index: number;
  /** The document as plain JSON data. */
  value: unknown;
}

export interface ParsedManifest {
  documents: ManifestDocument[];
  /** Why the text could not be read; `documents` is then empty. */
  error?: string;
}

/**
 * Parses a manifest's text. YAML may hold several documents separated by
 * `---` (upstream reads only the first; see the note below); empty ones are
 * skipped. JSON holds one value. Any syntax error refuses the whole text,
 * with its line number, so a half-written file never yields half its pods.
 */
export function parseManifest(text: string, format: 'yaml' | 'json'): ParsedManifest {
  return format === 'json' ? parseJson(text) : parseYaml(text);
}

function parseYaml(text: string): ParsedManifest {
  // The kubelet's decoder (utilyaml.ToJSON) reads one document per file; we
  // accept a stream because a file holding several pods is the common way
  // people write them, and each document still gets the single-pod checks.
  const parsed = parseAllDocuments(text);
  if (!Array.isArray(parsed)) return { documents: [] }; // an empty stream (only comments or nothing)
  const documents: ManifestDocument[] = [];
  for (const [index, doc] of parsed.entries()) {
    const first = doc.errors[0];
    if (first !== undefined) {
      const line = first.linePos?.[0].line ?? lineAt(text, first.pos[0]);
      return { documents: [], error: `YAML syntax error at line ${line}: ${firstLine(first.message)}` };
    }
    let value: unknown;
    try {
      value = doc.toJS();
    } catch (err) {
      // Unresolved aliases and alias bombs only show when the document is built.
      const line = lineAt(text, doc.contents?.range[0] ?? doc.range[0]);
      return { documents: [], error: `YAML error in the document at line ${line}: ${errorMessage(err)}` };
    }
    if (value === null || value === undefined) continue;
    documents.push({ index, value });
  }
  return { documents };
}

function parseJson(text: string): ParsedManifest {
  if (text.trim() === '') return { documents: [] };
  try {
    const value: unknown = JSON.parse(text);
    return { documents: value === null ? [] : [{ index: 0, value }] };
  } catch (err) {
    const message = errorMessage(err);
    // V8 says "... at position N" (and, in newer versions, "(line L column C)").
    const lineCol = /\(line (\d+) column \d+\)/.exec(message);
    const position = /at position (\d+)/.exec(message);
    const line = lineCol?.[1] !== undefined ? Number(lineCol[1]) : position?.[1] !== undefined ? lineAt(text, Number(position[1])) : lineAt(text, text.length);
    return { documents: [], error: `JSON syntax error at line ${line}: ${message}` };
  }
}

/**
 * The raw pods in one document: a v1 Pod, a v1 PodList's items, or an array
 * of Pods (what an http source may serve). Each pod comes back as read
 * (`unknown`), for makeStaticPod and validatePod to judge. Any other kind
 * refuses the whole document, as the kubelet's decoder does.
 */
export function extractPods(doc: unknown): { pods: unknown[]; error?: string } {
  if (Array.isArray(doc)) {
    const pods: unknown[] = [];
    for (const [i, item] of doc.entries()) {
      const problem = checkPodObject(item);
      if (problem !== undefined) return { pods: [], error: `item ${i}: ${problem}` };
      pods.push(item);
    }
    return { pods };
  }
  if (!isRecord(doc)) return { pods: [], error: `expected an object with apiVersion and kind, got ${describe(doc)}` };
  const kind = doc['kind'];
  if (kind === 'PodList') {
    const apiVersion = doc['apiVersion'];
    if (apiVersion !== 'v1') return { pods: [], error: `${apiVersionText(apiVersion)} is not supported for kind PodList (want apiVersion v1)` };
    const items = doc['items'];
    if (items === undefined || items === null) return { pods: [] };
    if (!Array.isArray(items)) return { pods: [], error: `PodList items must be a list, got ${describe(items)}` };
    const pods: unknown[] = [];
    for (const [i, item] of items.entries()) {
      // A list's items may leave kind and apiVersion out; when written they must say Pod and v1.
      if (!isRecord(item)) return { pods: [], error: `items[${i}]: expected a Pod object, got ${describe(item)}` };
      if (item['kind'] !== undefined || item['apiVersion'] !== undefined) {
        const problem = checkPodObject(item);
        if (problem !== undefined) return { pods: [], error: `items[${i}]: ${problem}` };
      }
      pods.push(item);
    }
    return { pods };
  }
  const problem = checkPodObject(doc);
  return problem === undefined ? { pods: [doc] } : { pods: [], error: problem };
}

/** Why `value` is not a v1 Pod object, or undefined when it is one. */
function checkPodObject(value: unknown): string | undefined {
  if (!isRecord(value)) return `expected a Pod object, got ${describe(value)}`;
  const kind = value['kind'];
  if (kind === undefined || kind === null || kind === '') return "missing kind (want apiVersion v1, kind Pod)";
  if (kind !== 'Pod') return `kind ${JSON.stringify(kind)} is not a Pod or PodList (want apiVersion v1, kind Pod)`;
  const apiVersion = value['apiVersion'];
  if (apiVersion !== 'v1') return `${apiVersionText(apiVersion)} is not supported for kind Pod (want apiVersion v1)`;
  return undefined;
}

function apiVersionText(apiVersion: unknown): string {
  return apiVersion === undefined || apiVersion === null || apiVersion === '' ? 'a missing apiVersion' : `apiVersion ${JSON.stringify(apiVersion)}`;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' || typeof v === 'undefined' ? `an ${typeof v}` : `a ${typeof v}`;
}

/** The 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The yaml library's message without its " at line L, column C:" and code excerpt. */
function firstLine(message: string): string {
  const head = message.split('\n', 1)[0] ?? message;
  return head.replace(/ at line \d+, column \d+:?$/, '');
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
