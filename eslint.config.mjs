// Type-aware lint (STYLE.md 13): every promise handled, exhaustive switches,
// and one door per lib: `@app/<lib>` only, never a path into a lib. A lib's
// test doubles sit behind a second door, `@app/<lib>/testing`, which only
// tests (*.spec.ts, test/) may open. One lib has a second production door:
// `@app/cri/client`, the CRI client without the generated proto module and grpc-js,
// which only cri-gateway needs (docs/adr/0018-idle-footprint.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Generated code (npm run gen) is not ours to style; gen:check keeps it fresh.
  { ignores: ['dist/**', 'node_modules/**', '**/*.mjs', '**/*.js', 'libs/cri/src/generated/**', 'apps/prober/src/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises that the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@app/*/*', '!@app/cri/client'], message: 'Import a lib through its one door: @app/<lib> (test doubles: @app/<lib>/testing, in tests only).' },
            { group: ['**/libs/*/src/*', '**/libs/*/src/**', '../../libs/**', '../../../libs/**'], message: 'Import a lib through its path alias @app/<lib>, not by path.' },
            { group: ['**/apps/**'], message: 'Apps never import each other (or be imported by libs).' },
          ],
        },
      ],
    },
  },
  {
    // Unit tests may open a lib's testing door.
    files: ['**/*.spec.ts', '**/testing.ts', '**/*.testing.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@app/*/*', '!@app/*/testing', '!@app/cri/client'], message: 'Import a lib through its one door: @app/<lib>, or its testing door @app/<lib>/testing.' },
            { group: ['**/libs/*/src/*', '**/libs/*/src/**', '../../libs/**', '../../../libs/**'], message: 'Import a lib through its path alias @app/<lib>, not by path.' },
            { group: ['**/apps/**'], message: 'Apps never import each other (or be imported by libs).' },
          ],
        },
      ],
    },
  },
  {
    // Tests may reach an app's definition and the deploy files; they still go through @app/* for libs.
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@app/*/*', '!@app/*/testing'], message: 'Import a lib through its one door: @app/<lib>, or its testing door @app/<lib>/testing.' },
            { group: ['**/libs/*/src/*', '**/libs/*/src/**'], message: 'Import a lib through its path alias @app/<lib>, not by path.' },
          ],
        },
      ],
    },
  },
);
