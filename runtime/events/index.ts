export { EventBus, type PlatformEvents, type PlatformEvent, type EventType } from './bus.js'
