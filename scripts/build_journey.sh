#!/usr/bin/env bash
# Rebuild the Overview's journey component (needs Node >= 18 and npm). Its output,
# ui/components/journey/frontend/build/, is committed, so running the app needs no Node;
# run this after editing anything in ui/components/journey/frontend/src/ and commit build/.
set -euo pipefail
cd "$(dirname "$0")/../ui/components/journey/frontend"
npm ci --no-audit --no-fund
npm run build
