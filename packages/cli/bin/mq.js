#!/usr/bin/env node
// Launcher kept outside dist/ so npm can link the `mq` binary at install time, before the first build.
import "../dist/bin.js";
