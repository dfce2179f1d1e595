/*
 * A stand-in bcryptprimitives.dll for smoke-running reins.exe under Wine 8
 * (Debian 12), which lacks it. The Go runtime takes its random bytes from
 * bcryptprimitives!ProcessPrng on Windows and refuses to start without it;
 * real Windows 10 and later ship the DLL. Only packaging/disttest uses this,
 * dropped beside reins.exe in a throwaway Wine prefix; it is never shipped.
 */
#include <windows.h>

/* advapi32!SystemFunction036, better known as RtlGenRandom. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
	while (length > 0) {
		ULONG n = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		length -= n;
	}
	return TRUE;
}
