/**
 * The doc comments of the contract's source, for the published document's
 * descriptions: each subject family's (the `Subjects` entries of
 * libs/contracts subjects.ts), each message's and record's interface and
 * its fields' (messages.ts, state.ts, and the records defined beside the
 * code that writes them). Read with the TypeScript compiler's parser, so a
 * description is written once, where the code is; the document is
 * regenerated when one changes (test/contract.spec.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { ContractDocs } from '@app/contract-doc';

/** The files read, from the repository's root. */
export const DOC_SOURCES = [
  'libs/contracts/src/subjects.ts',
  'libs/contracts/src/messages.ts',
  'libs/contracts/src/state.ts',
  'libs/leader-election/src/leader-election.ts',
  'libs/nats/src/shared-settings.ts',
  'libs/tracing/src/trace-records.ts',
] as const;

/** A node's doc comment as text: its JSDoc blocks' comments, `@tags` dropped, lines joined. */
function docOf(node: ts.Node, source: ts.SourceFile): string | undefined {
  const blocks = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const text = blocks
    .map((b) => (typeof b.comment === 'string' ? b.comment : (b.comment ?? []).map((c) => c.getText(source)).join('')))
    .join('\n')
    .trim();
  return text.length > 0 ? text.replaceAll(/\s*\n\s*/g, ' ').replaceAll(/\s{2,}/g, ' ') : undefined;
}

export function readContractDocs(root: string): ContractDocs {
  const families: Record<string, string> = {};
  const types: Record<string, ContractDocs['types'][string]> = {};
  for (const file of DOC_SOURCES) {
    const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2023, true);
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'Subjects' && node.initializer) {
        const init = ts.isAsExpression(node.initializer) ? node.initializer.expression : node.initializer;
        if (ts.isObjectLiteralExpression(init)) {
          for (const p of init.properties) {
            const doc = docOf(p, source);
            if (doc && p.name) families[p.name.getText(source)] = doc;
          }
        }
      }
      if (ts.isInterfaceDeclaration(node)) {
        const fields: Record<string, string> = {};
        let messageType: string | undefined;
        for (const m of node.members) {
          if (!ts.isPropertySignature(m)) continue;
          const name = m.name.getText(source);
          const doc = docOf(m, source);
          if (doc) fields[name] = doc;
          // `type: typeof MessageTypes.podUpdate`: the interface of that message.
          const t = m.type?.getText(source);
          if (name === 'type' && t?.startsWith('typeof MessageTypes.')) messageType = t.slice('typeof MessageTypes.'.length);
        }
        const doc = docOf(node, source);
        types[node.name.text] = { ...(doc ? { doc } : {}), fields, ...(messageType ? { messageType } : {}) };
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { families, types };
}
