// What a row's verdict says beside its numbers: a closed set of kinds. A note's `subject` is
// the field that tells two causes of one kind apart (a memory level, a clock limit); its
// `text` is the sentence with this row's numbers. Reports gather notes by kind and subject
// (report_notes.hpp), never by their words.
#pragma once

#include <string>

namespace roofline {

enum class NoteKind {
  // Warnings: something may be wrong, or the row lacks what it should have.
  kNoInstructionCeiling,  // the spec lacks the pipe's instruction; subject: instruction
  kNoCeiling,             // the spec lacks the path; subject: spec key and path
  kAboveComputeRoof,      // a measured rate above the compute roof
  kAboveXuRoof,           // exponentials above the XU roof
  kAboveLevelRoof,        // bytes above a level's roof; subject: the level
  kCountersUnavailable,   // the row's own message; subject: its words without numbers
  // Footnotes: fixed properties of a kernel or a counter set.
  kBytesOnly,        // a launch judged on its bytes alone; subject: why
  kClockLimited,     // timed at a board limit; subject: the limit
  kL1Partial,        // L1 bytes miss wgmma's operand reads
  kSharedWavefronts  // L1/shared bytes include shared wavefronts
};

struct RowNote {
  NoteKind kind;
  std::string subject;
  std::string text;

  friend bool operator==(const RowNote&, const RowNote&) = default;
};

}  // namespace roofline
