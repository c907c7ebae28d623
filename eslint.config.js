// Lint rules for the whole tree. Formatting is Prettier's job (.prettierrc.json);
// these rules catch mistakes. Type-aware rules are left out so that `npm run lint`
// stays a few seconds on CI's two cores; `tsc` (strict) already checks types.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'out/', 'bench/results/', 'test/goldens/', 'examples/app/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { console: 'readonly', process: 'readonly', Buffer: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
);
