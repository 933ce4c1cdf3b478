// Lint: typescript-eslint's recommended rules over the host, SDK, plugins, bench and tests.
// Layout is Prettier's (.prettierrc.json); eslint-config-prettier turns off the rules it owns.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import prettier from 'eslint-config-prettier'
import globals from 'globals'

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'data/',
      'bench/results/',
      'test/conformance/node_modules/',
      'test/fixtures/hostile-plugins/'
    ]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Prettier wraps code at 120; long strings and URLs stay whole, comments are wrapped by hand
      'max-len': [
        'error',
        { code: 120, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }
      ],
      // `interface ConfigKeys extends KeyValues<...> {}` is how an area adds its keys to the config's type
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }]
    }
  },
  {
    // tests poke at untyped wire data; `any` there is the honest type
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' }
  },
  {
    // the dashboard runs in the browser
    files: ['dashboard/**'],
    languageOptions: { globals: { ...globals.browser } }
  }
)
