/** CSS imported for esbuild, which emits it as app.css beside app.js. */
declare module '*.css';
