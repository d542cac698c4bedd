/*
 * requests.cc - the plugin's ckpt_where reply as tidald uses it (see
 * requests.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "nodeagent/requests.h"

namespace tidal::agent
{

using namespace tidal::wire;

bool parse_where_reply(const std::string &line, WhereReply *out,
		       std::string *err)
{
	*out = WhereReply();
	CkptWhereReply r;
	if (!decode(line, &r)) {
		*err = "malformed reply (not a JSON object)";
		return false;
	}
	if (!r.ok) {
		*err = r.error;
		return false;
	}
	out->uid = r.uid;
	auto add = [&](const CkptHolderRef &ref) {
		CkptHolder h;
		h.node = ref.node;
		h.step = ref.step;
		std::string e_err;
		if (!parse_endpoint(ref.addr, &h.addr, &e_err))
			h.problem = "no address for " + h.node;
		for (const CkptHolder &o : out->holders)
			if (o.node == h.node)
				return;
		out->holders.push_back(h);
	};
	/* "holders" (every node known, newest first); a plugin without it
	 * names only the newest one's node. */
	for (const CkptHolderRef &h : r.holders)
		add(h);
	if (out->holders.empty())
		add(r.newest);
	return true;
}

} /* namespace tidal::agent */
