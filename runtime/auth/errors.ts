import { defineErrors } from '../contracts/index.js'

/**
 * The codes of the read and write gates (core: `Platform` builds them).
 */
export const AUTH_ERRORS = defineErrors({
  ADMIN_WRITE_DISABLED: {
    status: 403,
    message: 'Admin write operations disabled',
    hint: 'Set platform.admin.http-write-enabled=true to enable'
  },
  ADMIN_AUTH_REQUIRED: { status: 401, message: 'Authentication required for admin write operations' },
  ADMIN_ROLE_REQUIRED: { status: 403, message: 'Forbidden: caller lacks required role' },
  ADMIN_FORBIDDEN: { status: 403, message: 'Forbidden' },
  ADMIN_READ_AUTH_REQUIRED: {
    status: 401,
    message: 'Admin read operations require authentication',
    hint: 'Send X-Platform-Auth header or disable platform.admin.http-read-auth-required'
  },
  ADMIN_CONTENT_READ_AUTH_REQUIRED: {
    status: 401,
    message: 'Admin read operations require authentication',
    hint: 'Send X-Platform-Auth header or disable platform.admin.content-read-auth-required'
  },
  ADMIN_OPERATOR_READ_AUTH_REQUIRED: {
    status: 401,
    message: 'This admin read requires authentication',
    hint: 'Send the token of a principal with platform.admin.required-role (no read flag lifts this)'
  },
  ADMIN_WORKSPACE_READ_AUTH_REQUIRED: {
    status: 401,
    message: 'Admin read operations require authentication',
    hint: 'Send X-Platform-Auth header or disable platform.admin.workspace-read-auth-required'
  }
})
