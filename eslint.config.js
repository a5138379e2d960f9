// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

// Layering rules of DESIGN.md §2: the core never sees a UI or a host, the contract never sees Node.
const uiAndHosts = [
  { group: ['electron', 'electron/*'], message: 'app/ is the core: it never imports electron.' },
  {
    group: ['react', 'react-dom', 'react/*'],
    message: 'app/ is the core: it never imports react.',
  },
  { group: ['**/renderer/**', '**/main/**'], message: 'app/ must not import hosts or the UI.' },
  {
    group: ['**/sim/**'],
    message: 'app/ must not import the simulators (sim/): a host injects the demo server.',
  },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'docs/**', '.tmp/**', 'release/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node }, ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.object.name='test'][callee.property.name=/^(only|skip)$/]",
          message: 'Every test runs.',
        },
        {
          selector: "CallExpression[callee.object.name='it'][callee.property.name=/^(only|skip)$/]",
          message: 'Every test runs.',
        },
        {
          selector:
            "CallExpression[callee.object.name='describe'][callee.property.name=/^(only|skip)$/]",
          message: 'Every test runs.',
        },
      ],
    },
  },
  {
    files: ['app/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: uiAndHosts }] },
  },
  {
    files: ['app/contract/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...uiAndHosts,
            {
              group: ['node:*'],
              message: 'app/contract is imported by the renderer: no node:* here.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'The renderer runs in a browser: no Node modules.' },
            {
              group: ['electron', 'electron/*'],
              message: 'The renderer talks to the core only through its Bridge.',
            },
            { group: ['**/main/**'], message: 'The renderer must not import hosts.' },
            {
              group: ['**/app/*', '!**/app/contract', '**/app/*/**', '!**/app/contract/**'],
              message: 'The renderer may import only app/contract from the core.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['main/headless/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['electron', 'electron/*'], message: 'Only main/electron imports electron.' },
          ],
        },
      ],
    },
  },
  prettier,
);
