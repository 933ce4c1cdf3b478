export { JwtValidator, type JwtOptions } from './jwt.js'
export { toTokenInfo, type TokenInfo, type TokenValidator } from './validators.js'
export { McpAuth, installMcpAuth, bearerOf, type AuthOutcome } from './mcp-auth.js'
