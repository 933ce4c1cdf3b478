// tap loads each test file in its own process, which transpiles the whole runtime the test imports:
// tsx (esbuild) does that in a fraction of ts-node's time.
exports.importLoader = 'tsx'
exports.testFileExtensions = ['ts']
