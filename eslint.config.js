// @ts-check
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

/** Modules that run programs: only the confinement layers and the git plumbing may import them. */
const CHILD_PROCESS_ALLOWED = [
  // The launcher, which runs eitri again under the pinned Node 24.
  'bin/eitri.js',
  // The one bounded spawn the others use (signal, deadline, group kill, bounded output).
  'src/util/bounded-spawn.ts',
  'src/util/bounded-spawn.test.ts',
  'src/jail/**',
  'src/confine/**',
  'src/eval/host/**',
  'src/workspace/git/**',
]

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      // Tools are async by contract; an async function that happens not to await is fine.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'node:vm',
              message:
                'node:vm is not a security boundary; untrusted code runs only in the isolate.',
            },
            {
              name: 'vm',
              message:
                'node:vm is not a security boundary; untrusted code runs only in the isolate.',
            },
            {
              name: 'node:child_process',
              message:
                'Programs run only through src/jail, src/confine, the eval host or the workspace git plumbing.',
            },
            {
              name: 'child_process',
              message:
                'Programs run only through src/jail, src/confine, the eval host or the workspace git plumbing.',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read the environment only in src/config.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'Export names explicitly (no export *).' },
      ],
    },
  },
  {
    files: CHILD_PROCESS_ALLOWED,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'node:vm', message: 'node:vm is not a security boundary.' },
            { name: 'vm', message: 'node:vm is not a security boundary.' },
          ],
        },
      ],
    },
  },
  {
    files: [
      'src/config/**',
      'src/cli/**',
      '**/*-main.ts',
      '**/*-main.mts',
      '**/*-main.mjs',
      'test/**',
      'bench/**',
      'scripts/**',
      'bin/**',
      '**/*.test.ts',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['test/**', 'bench/**', 'scripts/**', '**/*.test.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
)
